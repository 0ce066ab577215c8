"""llama.cpp's server, in-process, through the prebuilt xllamacpp wheel: one engine per GGUF per process.

xllamacpp runs llama.cpp's own server (slots, continuous batching, prompt cache, json_schema grammars) inside
this process; hierplan hands it OpenAI-style chat requests as dicts through ``Server.handle_chat_completions``,
never over HTTP. The server still opens its HTTP listener (xllamacpp always does): it is bound to 127.0.0.1 on
a port the kernel picks, and, being threads of this process, it ends with it (kill -9 included).

Every chat model on the same GGUF shares the one engine (``engine_for``): concurrent runs, parallel steps, the
LangGraph server and the web page send their requests to its slots instead of loading the weights again.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from hierplan.errors import HierplanError, ModelLoadError

# Slots, each holding a prompt's cache; with a GPU they decode side by side, more requests waiting in llama.cpp's
# queue.
DEFAULT_SLOTS = 4
# Context per slot: the planner's prompt with its examples, or a late step's with the earlier results, stays
# well under this; a reply is capped by max_tokens besides.
SLOT_CONTEXT_TOKENS = 4096
# llama.cpp's log level: -1 silent (its per-request timings would otherwise go to stderr).
QUIET = -1
SLOTS_ENV = "HIERPLAN_SLOTS"
THREADS_ENV = "HIERPLAN_THREADS"
# How many requests llama.cpp works on at once; more wait their turn in this process. On a CPU, slots decoding
# side by side are barely faster than one request at a time, and a request that lands on a slot holding another
# prompt prefills its whole prompt again, where one after another each finds its prompt cached on the slot that
# holds it (docs/benchmarks.md). So on a CPU-only machine requests take turns by default, each on the slot whose
# cache matches it best (llama.cpp's slot choice); with a GPU, every slot works at once.
CONCURRENT_ENV = "HIERPLAN_CONCURRENT_REQUESTS"
# Speculative decoding (a draft model, off by default): llama.cpp server's own defaults for --draft-max and
# --draft-p-min (a drafted token below this probability ends the draft).
DRAFT_MAX_TOKENS = 16
DRAFT_MIN_PROBABILITY = 0.75


class EngineError(HierplanError):
    """llama.cpp refused or failed a request: the run fails cleanly here, and ``resume`` continues it."""

    exit_code = 1


def cpu_threads() -> int:
    """$HIERPLAN_THREADS, else the cores this process may run on."""
    forced = os.environ.get(THREADS_ENV, "").strip()
    if forced:
        return max(1, int(forced))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class LlamaCppEngine:
    """The loaded GGUF and its server; ``chat`` and ``stream`` are safe to call from many threads at once."""

    def __init__(self, path: str, *, slots: int = DEFAULT_SLOTS, threads: int | None = None,
                 concurrent: int | None = None, draft: str | None = None, draft_tokens: int = DRAFT_MAX_TOKENS):
        """``draft``: a GGUF with the same tokenizer for llama.cpp's speculative decoding (it proposes up to
        ``draft_tokens`` tokens, the model checks them in one pass). Off by default: on a 2-core CPU it made
        decoding slower (docs/benchmarks.md, bench/speculative.py)."""
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = path
        params.n_parallel = slots
        params.n_ctx = SLOT_CONTEXT_TOKENS * slots
        params.kv_unified = True  # slots share one cache: a long prompt may use what short ones leave
        threads = threads or cpu_threads()
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.ui = False
        params.warmup = False
        params.verbosity = QUIET
        params.cache_prompt = True
        if draft:
            speculative = params.speculative
            speculative.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
            speculative.draft.mparams.path = str(draft)
            speculative.draft.n_max = draft_tokens
            speculative.draft.p_min = DRAFT_MIN_PROBABILITY
            speculative.draft.cpuparams.n_threads = threads
            speculative.draft.cpuparams_batch.n_threads = threads
        start = time.perf_counter()
        try:
            self._server = xllamacpp.Server(params)
        except Exception as error:  # llama.cpp says why in the message: a bad file, too little memory
            raise ModelLoadError(f"llama.cpp could not load {path}: {error}") from error
        self.load_seconds = round(time.perf_counter() - start, 3)
        self.path = path
        self.draft = draft
        self.slots = slots
        self.threads = threads
        self.concurrent = concurrency(slots, concurrent, xllamacpp.get_device_info())
        self._turns = threading.BoundedSemaphore(self.concurrent)

    @property
    def address(self) -> str:
        """The loopback address of the server's HTTP listener (hierplan itself never uses it)."""
        return str(self._server.listening_address)

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        """One chat completion (OpenAI request and response shapes)."""
        try:
            with self._turns:
                response = self._server.handle_chat_completions({**request, "stream": False})
        except ValueError as error:  # xllamacpp raises what llama.cpp's server answers with a 400
            raise EngineError(f"llama.cpp failed a request (400 invalid_request): {error}") from error
        return _checked(response, request)

    def stream(self, request: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> None:
        """Stream a completion: ``on_chunk`` gets each chunk and returns True to stop generating."""
        failure: list[dict[str, Any]] = []

        def callback(chunk: dict[str, Any]) -> bool:
            if _error(chunk):
                failure.append(chunk)
                return True
            return bool(on_chunk(chunk))

        try:
            with self._turns:
                self._server.handle_chat_completions(
                    {**request, "stream": True, "stream_options": {"include_usage": True}}, callback)
        except ValueError as error:  # as in ``chat``
            raise EngineError(f"llama.cpp failed a request (400 invalid_request): {error}") from error
        if failure:
            _checked(failure[0], request)


def concurrency(slots: int, requested: int | None, devices: list[dict[str, Any]]) -> int:
    """How many requests the engine works on at once: ``requested`` (at most ``slots``), else one on a CPU-only
    machine and every slot with a GPU (CONCURRENT_ENV says why)."""
    if requested is None:
        return 1 if cpu_only(devices) else slots
    return max(1, min(slots, requested))


def cpu_only(devices: list[dict[str, Any]]) -> bool:
    """Whether llama.cpp sees no GPU (``xllamacpp.get_device_info()``; an accelerator such as AMX or BLAS is the
    CPU's)."""
    return not any(getattr(d.get("type"), "name", str(d.get("type"))).endswith(("_GPU", "_IGPU")) for d in devices)


def _error(response: dict[str, Any]) -> dict[str, Any] | None:
    if "error" in response and isinstance(response["error"], dict):
        return response["error"]
    if "code" in response and "choices" not in response:
        return response
    return None


def _checked(response: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    error = _error(response)
    if error is not None:
        raise EngineError(f"llama.cpp failed a request ({error.get('code', '?')} {error.get('type', '')}): "
                          f"{error.get('message', error)}")
    return response


_engines: dict[str, LlamaCppEngine] = {}
_lock = threading.Lock()


def engine_for(path: str | os.PathLike, **kwargs: Any) -> LlamaCppEngine:
    """The process's engine for the GGUF at ``path``, loaded on first use."""
    key = str(Path(path).resolve())
    with _lock:
        engine = _engines.get(key)
        if engine is None:
            engine = _engines[key] = _load_engine(key, **kwargs)
        return engine


def _load_engine(path: str, **kwargs: Any) -> LlamaCppEngine:
    """The one place that loads GGUF weights into llama.cpp (tests/conftest.py guards it)."""
    kwargs.setdefault("slots", int(os.environ.get(SLOTS_ENV, "").strip() or DEFAULT_SLOTS))
    if forced := os.environ.get(CONCURRENT_ENV, "").strip():
        kwargs.setdefault("concurrent", int(forced))
    return LlamaCppEngine(path, **kwargs)
