"""Torch threads per generate call: all of torch's on free cores, fewer while other processes keep cores busy."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hierplan.models.cpu_share import MIN_WINDOW_S, CpuShare, Sample, read_sample


class Clock:
    """Scripted CPU counters: advance() says how busy everything and this process were over a window."""

    def __init__(self):
        self.now = Sample(busy_s=1000.0, own_s=10.0, at_s=50.0)

    def advance(self, seconds: float, busy_cpus: float, own_cpus: float) -> None:
        self.now = Sample(self.now.busy_s + busy_cpus * seconds, self.now.own_s + own_cpus * seconds,
                          self.now.at_s + seconds)

    def __call__(self) -> Sample:
        return self.now


def test_free_cores_get_all_of_torchs_threads():
    clock = Clock()
    share = CpuShare(2, cpus=2, sample=clock)
    clock.advance(3.0, busy_cpus=2.0, own_cpus=1.95)  # hierplan alone, decoding on both cores
    assert share.threads() == 2


@pytest.mark.parametrize(("others", "expected"), [(0.2, 2), (0.7, 1), (1.0, 1), (2.0, 1)])
def test_cores_other_processes_keep_busy_are_left_to_them(others, expected):
    clock = Clock()
    share = CpuShare(2, cpus=2, sample=clock)
    clock.advance(2.0, busy_cpus=min(2.0, others + 1.0), own_cpus=1.0)
    assert share.threads() == expected
    assert share.others == pytest.approx(min(2.0, others + 1.0) - 1.0)


def test_threads_come_back_when_the_other_process_stops():
    clock = Clock()
    share = CpuShare(4, cpus=4, sample=clock)
    clock.advance(2.0, busy_cpus=4.0, own_cpus=1.0)  # three other processes
    assert share.threads() == 1
    clock.advance(2.0, busy_cpus=2.1, own_cpus=2.0)
    assert share.threads() == 4


def test_a_short_window_keeps_the_last_choice():
    clock = Clock()
    share = CpuShare(2, cpus=2, sample=clock)
    clock.advance(2.0, busy_cpus=2.0, own_cpus=1.0)
    assert share.threads() == 1
    clock.advance(MIN_WINDOW_S / 2, busy_cpus=0.0, own_cpus=0.0)  # 10 ms ticks: too short to tell
    assert share.threads() == 1


def test_never_more_than_torchs_own_count_nor_less_than_one():
    clock = Clock()
    share = CpuShare(1, cpus=8, sample=clock)  # OMP_NUM_THREADS=1 on an 8-CPU machine
    clock.advance(2.0, busy_cpus=0.0, own_cpus=0.0)
    assert share.threads() == 1
    assert CpuShare(0, cpus=2, sample=clock).max_threads == 1


def test_without_proc_stat_nothing_changes():
    share = CpuShare(2, cpus=2, sample=lambda: None)
    assert share.threads() == 2


def test_the_real_counters_see_another_busy_process():
    first = read_sample()
    if first is None:
        pytest.skip("no /proc/stat")
    spinner = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"])
    spinner.wait(timeout=30)
    second = read_sample()
    others = ((second.busy_s - first.busy_s) - (second.own_s - first.own_s)) / (second.at_s - first.at_s)
    assert others > 0.5, f"the spinning child used {others:.2f} CPUs by the counters"


def test_each_generate_pass_runs_on_the_threads_the_share_chose():
    torch = pytest.importorskip("torch")
    from hierplan.models.batcher import generation_context as _generation_context

    class Share:
        others = 1.0

        def __init__(self, answers):
            self.answers = answers

        def threads(self):
            return self.answers.pop(0)

    before = torch.get_num_threads()
    context = _generation_context(Share([1, before]))
    try:
        with context():
            assert torch.get_num_threads() == 1 and torch.is_inference_mode_enabled()
        with context():
            assert torch.get_num_threads() == before
        with _generation_context(None)():  # CUDA: threads untouched, still inference mode
            assert torch.get_num_threads() == before and torch.is_inference_mode_enabled()
    finally:
        torch.set_num_threads(before)
