"""How many torch threads the next generate call gets: torch's own count, or fewer while other processes
keep cores busy.

torch runs a kernel on all its threads and waits for the slowest. When another process shares a core, that
thread runs only part of the time and every kernel waits for it: on 2 cores, one other busy process made
2-thread decode 3.6x slower (12.0 against 43.7 tok/s), while 1 thread still ran 34 tok/s
(bench/omp_policy.py, docs/benchmarks.md "OpenMP wait policy"). So before each generate call hierplan
looks at how much CPU other processes used since the last call (all CPUs' busy time in /proc/stat minus this
process's own) and runs on the cores they left free, at least one. Model-written code that hierplan runs in
parallel counts as another process.

Why not a library: psutil reports the same counters, but the decision is three lines and runs per call.
"""

from __future__ import annotations

import os
import time
from typing import Callable, NamedTuple

# Shorter windows are noise: /proc/stat counts in 10 ms ticks.
MIN_WINDOW_S = 0.5


class Sample(NamedTuple):
    busy_s: float  # all CPUs together, since boot
    own_s: float  # this process, all its threads
    at_s: float  # monotonic clock


def read_sample() -> Sample | None:
    """CPU time now, or None where /proc/stat is missing (not Linux)."""
    try:
        with open("/proc/stat") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    times = os.times()
    ticks = os.sysconf("SC_CLK_TCK")
    return Sample((user + nice + system + irq + softirq + steal) / ticks, times.user + times.system, time.monotonic())


class CpuShare:
    """``threads()``: the thread count for the next generate call (see the module docstring)."""

    def __init__(self, max_threads: int, cpus: int | None = None,
                 sample: Callable[[], Sample | None] = read_sample):
        self.max_threads = max(1, max_threads)
        self.cpus = cpus or os.cpu_count() or self.max_threads
        self._sample = sample
        self._last = sample()
        self.current = self.max_threads
        self.others = 0.0  # CPUs' worth of other processes' work in the last window

    def threads(self) -> int:
        now = self._sample()
        if now is None or self._last is None:
            return self.current
        elapsed = now.at_s - self._last.at_s
        if elapsed < MIN_WINDOW_S:
            return self.current
        self.others = max(0.0, ((now.busy_s - self._last.busy_s) - (now.own_s - self._last.own_s)) / elapsed)
        self._last = now
        free = self.cpus - self.others
        self.current = max(1, min(self.max_threads, int(free + 0.5)))
        return self.current
