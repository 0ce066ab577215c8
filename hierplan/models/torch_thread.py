"""One long-lived thread runs hierplan's torch work: loading a model and every generate call.

libgomp, torch's OpenMP runtime, keeps a team of idle worker threads for each thread that has run a parallel
kernel. Once those teams hold more threads than the machine has CPUs, libgomp stops spinning between kernels
(its "throttled" spin) and every kernel pays for waking its workers. On 2 cores an int4 matmul took 27 us
on one thread, and 89 us on that thread and the main one once both had run kernels. Generating on the
calling thread after loading on another decoded about 20 tok/s, on this one thread 45, whether called from
the main thread or from worker threads such as LangGraph's (docs/benchmarks.md, "Generation thread"). So hierplan keeps all of it on one thread, whichever thread calls.

Why not a library: this is a one-worker ThreadPoolExecutor; what is ours is carrying the caller's context
variables over (LangGraph's stream writer lives in them) and telling work whose caller gave up to stop.
Generate passes are queued here by batcher.py.
"""

from __future__ import annotations

import contextvars
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

_executor: ThreadPoolExecutor | None = None
_guard = threading.Lock()
_here = threading.local()


def _mark() -> None:
    _here.inside = True


def on_torch_thread() -> bool:
    return getattr(_here, "inside", False)


def submit(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Queue ``fn(*args, **kwargs)`` on the torch thread with the caller's context variables; do not wait."""
    global _executor
    with _guard:
        if _executor is None:
            _executor = ThreadPoolExecutor(1, thread_name_prefix="hierplan-torch", initializer=_mark)
    return _executor.submit(contextvars.copy_context().run, fn, *args, **kwargs)


def run(fn: Callable[..., Any], *args: Any, on_abandon: Callable[[], None] | None = None, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on the torch thread with the caller's context variables; its result or exception.

    Run inline when already on that thread. If the caller is interrupted while waiting (Ctrl-C), ``on_abandon``
    is called so the work can stop early, and the interruption propagates.
    """
    if on_torch_thread():
        return fn(*args, **kwargs)
    future = submit(fn, *args, **kwargs)
    try:
        return future.result()
    except BaseException:
        if not future.done() and on_abandon is not None:
            on_abandon()
        raise
