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


def test_submit_queues_on_the_torch_thread_without_waiting():
    release = threading.Event()

    def blocked():
        release.wait(5)
        return threading.current_thread().name

    future = torch_thread.submit(blocked)
    assert not future.done()  # the caller went on while the work waits
    release.set()
    assert future.result(5).startswith("hierplan-torch")
