"""Rows from every caller of one local model go through shared generate passes on the torch thread.

A caller submits its rows and waits. While a pass runs, newly submitted rows queue; when it ends (or
pauses, see Batcher), every queued request (up to ``MAX_BATCH_ROWS`` rows) goes into the next pass
together. So concurrent runs in one process share the model: on CPU a decode step of a small model costs
far less than N times one row's step for a few rows (docs/benchmarks.md, "Concurrent runs"). A request's
rows always start in one pass (a node's batch of parallel LLM steps stays one pass). Passes run one at a
time on the torch thread (torch_thread.py), which is also the model lock: nothing else generates meanwhile.

``Gather`` lets several threads (BaseChatModel.batch runs one per input) hand in one request together.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Callable

from hierplan.models import torch_thread
from hierplan.models.rows import Row

log = logging.getLogger(__name__)

# Rows per generate pass. Past ~16 rows a pass on CPU costs nearly linearly more per step, and long prompts
# padded to the longest one waste more; later requests simply wait for the next pass.
MAX_BATCH_ROWS = 16
# A pass runs at least this many steps before it may pause its rows for newly arrived ones: a pause costs a
# prefill of every paused row's prompt + text, which on the busy 2-core machine took ~3.7 s for 4 rows of
# ~350 tokens, about 25-30 decode steps of a 4-row pass; with 4 steps passes thrashed (docs/benchmarks.md).
MIN_PASS_STEPS = 32


class Request:
    def __init__(self, rows: list[Row]):
        self.rows = rows
        self.done = threading.Event()
        self.error: BaseException | None = None

    def live(self) -> list[Row]:
        return [row for row in self.rows if row.finish is None]


def generation_context(share: Any | None) -> Callable[[], Any]:
    """A context manager factory entered around each pass.

    inference_mode rather than no_grad: it also skips autograd's version counting and view tracking, about
    10% faster decode on the embedded model (bench/decode.py); nothing hierplan generates is differentiated.
    On CPU, ``share`` (cpu_share.CpuShare) sets the torch threads for the pass.
    """
    import torch

    @contextlib.contextmanager
    def context():
        if share is not None:
            threads = share.threads()
            if threads != torch.get_num_threads():
                log.debug("generating on %d torch threads (other processes used %.1f CPUs)", threads, share.others)
                torch.set_num_threads(threads)
        with torch.inference_mode():
            yield

    return context


class Batcher:
    """Queues requests and runs them in shared passes: ``run_pass(rows, pause)`` generates for all rows at once
    and pauses the rows still going when ``pause(step, live_rows)`` says so.

    Pausing: generate cannot take rows in mid-pass, so when as many rows wait as are still going (say one
    long plan running alone while three runs' calls wait), the pass ends early and its rows continue in the
    next pass together with the waiting ones, from their prompt plus what they generated (a fresh prefill of
    that, cheap next to hundreds of single-row decode steps). A continued row keeps its random generator,
    grammar state, budget and stream, so it produces what it would have in one pass (up to rounding).
    """

    def __init__(self, run_pass: Callable[[list[Row], Callable[[int, int], bool]], None],
                 max_rows: int = MAX_BATCH_ROWS):
        self.run_pass, self.max_rows = run_pass, max_rows
        self._pending: list[Request] = []
        self._draining = False
        self._guard = threading.Lock()
        self.passes = 0
        """Generate passes run so far (tests and benchmarks read it)."""

    def generate(self, rows: list[Row]) -> None:
        """Generate for ``rows`` (filled in place); returns when their pass ends."""
        self.wait(self.submit(rows))

    def submit(self, rows: list[Row]) -> Request:
        request = Request(rows)
        if torch_thread.on_torch_thread():  # a call made from the torch thread itself cannot wait for it
            self._run([request], pausable=False)
            return request
        with self._guard:
            self._pending.append(request)
            start = not self._draining
            self._draining = True
        if start:
            torch_thread.submit(self._drain)
        return request

    def wait(self, request: Request) -> None:
        try:
            request.done.wait()
        except BaseException:  # Ctrl-C while waiting: end this caller's rows at their next token
            for row in request.rows:
                row.abandoned.set()
            raise
        if request.error is not None:
            raise request.error

    def _drain(self) -> None:
        while True:
            with self._guard:
                if not self._pending:
                    self._draining = False
                    return
                taken, rows = [], 0
                while self._pending and (not taken or rows + len(self._pending[0].live()) <= self.max_rows):
                    rows += len(self._pending[0].live())
                    taken.append(self._pending.pop(0))
            self._run(taken)

    def _pause(self, step: int, live: int) -> bool:
        if step < MIN_PASS_STEPS:
            return False
        with self._guard:
            waiting = sum(len(request.live()) for request in self._pending)
        return waiting >= live and waiting + live <= self.max_rows

    def _run(self, requests: list[Request], pausable: bool = True) -> None:
        rows = [row for request in requests for row in request.live()]
        paused: list[Request] = []
        try:
            self.passes += 1
            if rows:
                self.run_pass(rows, self._pause if pausable else None)
            paused = [request for request in requests if any(row.finish == "paused" for row in request.rows)]
            for row in rows:
                if row.finish == "paused":
                    row.finish = None
        except BaseException as error:  # the callers raise it; the torch thread keeps serving
            paused = []
            for request in requests:
                request.error = error
        finally:
            if paused:
                with self._guard:
                    self._pending[:0] = paused  # first in line for the next pass
            for request in requests:
                if request not in paused:
                    request.done.set()


class Gather:
    """``n`` threads each hand in one row; the last one submits them all as one request.

    A thread that fails before it has a row hands in None, so the others never wait for it; handing in
    twice for one index is a no-op.
    """

    def __init__(self, n: int, batcher: Batcher):
        self.rows: list[Row | None] = [None] * n
        self.batcher = batcher
        self.request: Request | None = None
        self._given: set[int] = set()
        self._guard = threading.Lock()
        self._ready = threading.Event()

    def give(self, index: int, row: Row | None) -> Request | None:
        with self._guard:
            if index in self._given:
                return self.request
            self._given.add(index)
            self.rows[index] = row
            last = len(self._given) == len(self.rows)
        if last:
            try:
                self.request = self.batcher.submit([r for r in self.rows if r is not None])
            finally:
                self._ready.set()
        else:
            self._ready.wait()
        return self.request
