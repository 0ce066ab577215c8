"""hierplan's torch work runs on one thread, whichever thread asks; context, errors and Ctrl-C carry over."""

from __future__ import annotations

import contextvars
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from hierplan.models import torch_thread

request_id = contextvars.ContextVar("request_id", default=None)


def test_calls_from_any_thread_run_on_the_same_one():
    def where():
        return threading.get_ident(), threading.current_thread().name, torch_thread.on_torch_thread()

    from_main = torch_thread.run(where)
    with ThreadPoolExecutor(3) as pool:
        from_workers = [pool.submit(torch_thread.run, where).result() for _ in range(6)]
    assert from_main[0] != threading.get_ident() and from_main[1].startswith("hierplan-torch") and from_main[2]
    assert {ident for ident, _, _ in from_workers} == {from_main[0]}
    assert not torch_thread.on_torch_thread()


def test_the_callers_context_variables_and_errors_come_along():
    token = request_id.set("run-7")
    try:
        assert torch_thread.run(request_id.get) == "run-7"
    finally:
        request_id.reset(token)

    def broken():
        raise ValueError("bad weights")

    with pytest.raises(ValueError, match="bad weights"):
        torch_thread.run(broken)


def test_a_call_made_on_the_torch_thread_runs_inline():
    def outer():
        return torch_thread.run(threading.get_ident) == threading.get_ident()

    assert torch_thread.run(outer)  # would deadlock if it queued behind itself


def test_ctrl_c_while_waiting_tells_the_work_to_stop():
    abandoned = threading.Event()
    finished = threading.Event()

    def generate():
        deadline = time.monotonic() + 10
        while not abandoned.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        finished.set()

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            torch_thread.run(generate, on_abandon=abandoned.set)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert abandoned.is_set()
    assert finished.wait(5), "the abandoned work did not stop"


def test_a_pinned_forward_keeps_the_callers_stopping_criteria_and_adds_one_for_abandoning():
    torch = pytest.importorskip("torch")
    seen = {}

    def forward(model_inputs, **params):
        seen.update(params, thread=threading.current_thread().name, inputs=model_inputs)
        return "outputs"

    class Mine:
        def __call__(self, input_ids, scores, **kwargs):
            return torch.zeros(input_ids.shape[0], dtype=torch.bool)

    pinned = torch_thread.pinned_forward(forward)
    assert pinned({"input_ids": 1}, max_new_tokens=5, stopping_criteria=[Mine()]) == "outputs"
    assert seen["thread"].startswith("hierplan-torch") and seen["max_new_tokens"] == 5
    criteria = seen["stopping_criteria"]
    assert isinstance(criteria[0], Mine) and len(criteria) == 2
    ids = torch.zeros((2, 3), dtype=torch.long)
    assert not criteria[1](ids, None).any()  # not abandoned: generation goes on


def test_the_abandon_criterion_stops_every_sequence_once_set():
    torch = pytest.importorskip("torch")
    event = threading.Event()
    criterion = torch_thread.stop_when_set(event)
    ids = torch.zeros((3, 4), dtype=torch.long)
    assert criterion(ids, None).tolist() == [False, False, False]
    event.set()
    assert criterion(ids, None).tolist() == [True, True, True]
