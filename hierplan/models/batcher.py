"""Rows from every caller of one local model decode together in one running batch on the torch thread.

A caller submits its rows and waits. Between two decode steps, every queued request (up to
``MAX_BATCH_ROWS`` rows in all) joins the running batch, and a row leaves it the step it finishes
(decode.py). So concurrent runs in one process share the model: on CPU a decode step of a small model costs
far less than N times one row's step for a few rows (docs/benchmarks.md, "Concurrent runs"). A request's
rows always join together (a node's batch of parallel LLM steps is prefilled as one). Everything runs on the
torch thread (torch_thread.py), which is also the model lock: nothing else generates meanwhile.

``Gather`` lets several threads (BaseChatModel.batch runs one per input) hand in one request together.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Callable

from hierplan.models import torch_thread
from hierplan.models.decode import RunningBatch
from hierplan.models.rows import Row

log = logging.getLogger(__name__)

# Rows decoding at once. Past ~16 rows a step on CPU costs nearly linearly more per row, and long prompts
# padded to the longest one waste more; later requests simply wait for rows to finish.
MAX_BATCH_ROWS = 16
# Decode steps run under one generation context; the CPU share (torch threads) is looked at again after.
STEPS_PER_CONTEXT = 32


class Request:
    def __init__(self, rows: list[Row]):
        self.rows = rows
        self.done = threading.Event()
        self.error: BaseException | None = None

    def live(self) -> list[Row]:
        return [row for row in self.rows if row.finish is None]


def generation_context(share: Any | None) -> Callable[[], Any]:
    """A context manager factory entered around each stretch of decode steps.

    inference_mode rather than no_grad: it also skips autograd's version counting and view tracking, about
    10% faster decode on the embedded model (bench/decode.py); nothing hierplan generates is differentiated.
    On CPU, ``share`` (cpu_share.CpuShare) sets the torch threads for the stretch.
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
    """Queues requests and decodes them in one running batch: ``new_batch()`` makes an empty RunningBatch,
    ``context()`` is entered around each stretch of steps (see generation_context)."""

    def __init__(self, new_batch: Callable[[], RunningBatch], context: Callable[[], Any] = contextlib.nullcontext,
                 max_rows: int = MAX_BATCH_ROWS):
        self.new_batch, self.context, self.max_rows = new_batch, context, max_rows
        self._pending: list[Request] = []
        self._draining = False
        self._guard = threading.Lock()
        self.prefills = 0
        """Prefill passes so far: each admits every row waiting at that moment (tests and benchmarks read it)."""
        self.steps = 0
        """Decode steps so far."""
        self.row_steps = 0
        """Rows summed over decode steps (row_steps / steps: rows per step on average)."""
        self.widest = 0
        """The most rows one decode step has had."""

    def generate(self, rows: list[Row]) -> None:
        """Generate for ``rows`` (filled in place); returns when they are all finished."""
        self.wait(self.submit(rows))

    def submit(self, rows: list[Row]) -> Request:
        request = Request(rows)
        if torch_thread.on_torch_thread():  # a call made from the torch thread itself cannot wait for it
            self._serve([request], take=lambda batch: [])
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

    def _take(self, batch: RunningBatch | None) -> list[Request]:
        """The queued requests that fit beside the rows running in ``batch`` (None: none running)."""
        running = len(batch.live) if batch is not None else 0
        with self._guard:
            if batch is not None and not batch.can_join:
                return []
            taken, rows = [], running
            while self._pending and (rows == 0 or rows + len(self._pending[0].live()) <= self.max_rows):
                rows += len(self._pending[0].live())
                taken.append(self._pending.pop(0))
            if not taken and not running:
                self._draining = False  # nothing left: the next submit starts a new drain
            return taken

    def _drain(self) -> None:
        while first := self._take(None):
            self._serve(first, self._take)

    def _serve(self, queued: list[Request], take: Callable[[RunningBatch], list[Request]]) -> None:
        """Decode ``queued`` and whatever ``take`` hands in between steps, until no row is left."""
        batch, running = self.new_batch(), []
        try:
            while True:
                with self.context():
                    for _ in range(STEPS_PER_CONTEXT):
                        if queued:
                            running += queued
                            rows = [row for request in queued for row in request.live()]
                            queued = []
                            if rows:
                                self.prefills += 1
                                batch.add(rows)
                            running = self._finish(running)
                        if not batch.live:
                            queued = take(batch)
                            if not queued:
                                return
                            continue
                        self.steps += 1
                        self.row_steps += len(batch.live)
                        self.widest = max(self.widest, len(batch.live))
                        batch.step()
                        running = self._finish(running)
                        queued = take(batch)
        except BaseException as error:  # the callers raise it; the torch thread keeps serving
            for request in running + queued:
                request.error = error
                request.done.set()

    @staticmethod
    def _finish(running: list[Request]) -> list[Request]:
        """Release the requests whose rows are all finished; the others still run."""
        still = []
        for request in running:
            if request.live():
                still.append(request)
            else:
                request.done.set()
        return still


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
