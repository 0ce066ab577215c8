"""Remote chat models: any OpenAI-compatible server (vLLM, llama.cpp's server, Ollama, TGI, transformers serve).

``load_chat_model("openai:NAME", base_url=URL)`` gives an ``OpenAICompatibleChatModel``: langchain-openai's
``BaseChatOpenAI`` (ChatOpenAI's base, the class langchain's own OpenAI-compatible providers build on) plus what
hierplan's model contract asks of every model (docs/remote.md):

- per-call sampling kwargs (``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``repetition_penalty``) become
  request fields the server understands; ``max_tokens`` is sent as ``max_tokens`` (ChatOpenAI renames it to
  ``max_completion_tokens``, which llama.cpp's server ignores);
- token usage comes from the server's ``usage`` (``usage_metadata``), streamed usage included;
- ``with_structured_output(Schema, include_raw=True)`` is constrained on the server (structured.py); a
  request shape the server refuses (400/422) moves on to the next method, then to an unconstrained request;
- every failure to talk to the server is one ``RemoteModelError`` line that never holds the API key.

The key is read from the argument or OPENAI_API_KEY and kept as a pydantic SecretStr inside the client; it is not
in the model's metadata, in run options or in checkpoints (nodes keep no model in state).
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, AsyncIterator, Iterator
from urllib.parse import urlsplit, urlunsplit

import openai
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai.chat_models.base import BaseChatOpenAI
from pydantic import PrivateAttr

from hierplan.errors import RemoteModelError, UsageError
# the structured-output adapter sits below this client: it names the modes, the client picks one
from hierplan.models.remote.structured import STRUCTURED_ENV, StructuredOutput, normalize_method

log = logging.getLogger(__name__)

PREFIX = "openai:"
TIMEOUT_ENV = "HIERPLAN_REMOTE_TIMEOUT"
PENALTY_ENV = "HIERPLAN_REMOTE_REPETITION_PENALTY"
# A 7B model writing a 650-token plan on a server other agents share can take minutes; a dead server is
# caught sooner by the connection error.
DEFAULT_TIMEOUT_S = 600.0
# The openai client retries connection errors, 408, 409, 429 and 5xx with backoff (about 0.5 s, then 1 s).
MAX_RETRIES = 2
# The openai client refuses to start without a key; servers without auth ignore this one.
NO_KEY = "no-key"
MAX_ERROR_CHARS = 300


class OpenAICompatibleChatModel(BaseChatOpenAI):
    """A chat model served over HTTP by an OpenAI-compatible server (see the module docstring)."""

    structured: str = "auto"
    """How ``with_structured_output`` constrains output: one of structured.STRUCTURED_MODES; "auto" probes the server once."""
    repetition_penalty_param: str | None = None
    """The request field the server takes a repetition penalty in ("repetition_penalty" for vLLM and TGI,
    "repeat_penalty" for llama.cpp); None drops the penalty (OpenAI's API and transformers serve have none)."""

    _probed: str | None = PrivateAttr(default=None)
    _probe_lock: Any = PrivateAttr(default_factory=threading.Lock)
    _refused: set = PrivateAttr(default_factory=set)

    @property
    def _llm_type(self) -> str:
        return "openai-compatible"

    @property
    def lc_attributes(self) -> dict[str, Any]:
        """What langchain's serialization (dumpd, tracing) records: the base URL without credentials."""
        attributes = dict(super().lc_attributes)
        if attributes.get("openai_api_base"):
            attributes["openai_api_base"] = public_url(attributes["openai_api_base"])
        return attributes

    def __repr_args__(self):
        """repr (and so langchain's dumpd of this class) shows the base URL without credentials."""
        for name, value in super().__repr_args__():
            yield name, public_url(value) if name == "openai_api_base" and isinstance(value, str) else value

    @property
    def server(self) -> str:
        """The server's address without credentials, for messages."""
        return public_url(self.openai_api_base or "https://api.openai.com/v1")

    # ------------------------------------------------------------------ the four calls BaseChatModel makes

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager=None,
                  **kwargs: Any) -> ChatResult:
        try:
            return super()._generate(messages, stop, run_manager, **self._request_kwargs(kwargs))
        except openai.APIError as exc:
            raise self.remote_error(exc) from exc

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager=None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        try:
            yield from super()._stream(messages, stop, run_manager, **self._request_kwargs(kwargs))
        except openai.APIError as exc:
            raise self.remote_error(exc) from exc

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager=None,
                         **kwargs: Any) -> ChatResult:
        try:
            return await super()._agenerate(messages, stop, run_manager, **self._request_kwargs(kwargs))
        except openai.APIError as exc:
            raise self.remote_error(exc) from exc

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager=None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        try:
            async for chunk in super()._astream(messages, stop, run_manager, **self._request_kwargs(kwargs)):
                yield chunk
        except openai.APIError as exc:
            raise self.remote_error(exc) from exc

    def _request_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The contract's sampling kwargs as request fields; fields outside OpenAI's API go in extra_body."""
        kwargs = dict(kwargs)
        for alias in ("max_completion_tokens", "max_new_tokens"):
            if alias in kwargs:
                value = kwargs.pop(alias)
                kwargs.setdefault("max_tokens", value)
        extra = {**(self.extra_body or {}), **(kwargs.pop("extra_body", None) or {})}
        if "min_tokens" in kwargs:  # benchmarks only; vLLM's name for it
            extra["min_tokens"] = kwargs.pop("min_tokens")
        penalty = kwargs.pop("repetition_penalty", None)
        if penalty is not None and self.repetition_penalty_param:
            extra[self.repetition_penalty_param] = penalty
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    # ------------------------------------------------------------------ structured output

    def with_structured_output(self, schema: Any = None, *, include_raw: bool = False, method: str | None = None,
                               **kwargs: Any):
        """A runnable giving ``{"raw", "parsed", "parsing_error"}`` (``include_raw=True``) or the parsed object.

        ``method``: a STRUCTURED_MODES value (langchain's "json_mode" and "function_calling" are accepted);
        default: the model's ``structured`` setting, where "auto" probes the server on the first call (so this
        call may raise RemoteModelError). Raises NotImplementedError where output cannot be constrained ("none",
        or nothing the probe tried was applied), so callers use their own text path. Extra kwargs are sent with
        every request, as are kwargs given to the runnable's ``invoke`` or ``bind``.
        """

        if schema is None:
            raise ValueError("with_structured_output needs a schema")
        chosen = normalize_method(method) if method is not None else self.structured
        if chosen == "auto":
            chosen = self.structured_method()
        if chosen == "none":
            raise NotImplementedError(f"structured output is off for the model server at {self.server} "
                                      f"({STRUCTURED_ENV}=none, or it applied no format when probed)")
        return StructuredOutput(self, schema, chosen, include_raw, kwargs)

    def structured_method(self) -> str:
        """The method structured output uses: the explicit setting, or the first format the server honours
        (probed once per model with a tiny yes/no schema; "none" when it honours none)."""
        if self.structured != "auto":
            return self.structured
        with self._probe_lock:
            if self._probed is None:
                from hierplan.models.remote.structured import probe

                self._probed = probe(self)
                self.metadata = {**(self.metadata or {}), "hierplan_structured_probe": self._probed}
        return self._probed

    def refused_shape(self, schema_name: str, method: str) -> bool:
        """Whether the server refused ``method`` for the schema named ``schema_name`` before (HTTP 400/422)."""
        return (schema_name, method) in self._refused

    def refuse_shape(self, schema_name: str, method: str) -> None:
        """Remember the refusal, so later calls for the schema start at the next method (once per process)."""
        self._refused.add((schema_name, method))

    # ------------------------------------------------------------------ errors

    def remote_error(self, exc: Exception) -> RemoteModelError:
        """One line saying what went wrong with the server and what to do; the API key is never in it."""
        where = f"the model server at {self.server}"
        status = getattr(exc, "status_code", None)
        if isinstance(exc, openai.APITimeoutError):
            text = (f"{where} did not answer within {self.request_timeout:g} s "
                    f"(set {TIMEOUT_ENV} to wait longer)")
        elif isinstance(exc, openai.APIConnectionError):
            text = (f"cannot reach {where} ({_root_cause(exc)}); start it, or point --base-url / "
                    "OPENAI_BASE_URL at one that runs")
        elif status == 401:
            text = f"{where} refused the API key (401 {_detail(exc)}); set OPENAI_API_KEY to a key it accepts"
        elif status == 403:
            text = f"{where} refused the request (403 {_detail(exc)}); check OPENAI_API_KEY's permissions"
        elif status == 404:
            text = (f"{where} has no model {self.model_name!r} or no chat completions endpoint "
                    f"(404 {_detail(exc)}); GET {self.server}/models lists its models, and the base URL "
                    "usually ends in /v1")
        elif status is not None:
            text = f"{where} answered HTTP {status}: {_detail(exc)}"
        else:
            text = f"{where} sent an answer hierplan cannot read ({type(exc).__name__}: {exc})"
        return RemoteModelError(self._scrub(text), status=status)

    def _scrub(self, text: str) -> str:
        text = " ".join(text.split())
        key = self.openai_api_key
        secret = key.get_secret_value() if hasattr(key, "get_secret_value") else None
        if secret and secret != NO_KEY:
            text = text.replace(secret, "***")
        return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


def _root_cause(exc: BaseException) -> str:
    seen = exc
    while seen.__cause__ is not None or seen.__context__ is not None:
        seen = seen.__cause__ or seen.__context__
    text = str(seen).strip() or type(seen).__name__
    return "connection refused" if "refused" in text.lower() else text


def _detail(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            inner = inner.get("message") or inner.get("detail") or inner
        return str(inner)
    return str(body or getattr(exc, "message", None) or exc)


def public_url(url: str) -> str:
    """``url`` without user:password@ and without query or fragment (which may carry tokens)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def is_remote(model: Any) -> bool:
    """True for an ``openai:NAME`` model spec."""
    return isinstance(model, str) and model.strip().lower().startswith(PREFIX)


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise UsageError(f"{name} must be more than 0 seconds")
    return value


def load_remote_model(model: str, *, base_url: str | None = None, api_key: str | None = None,
                      max_new_tokens: int = 512, structured: str | None = None, timeout: float | None = None,
                      repetition_penalty_param: str | None = None, device: str | None = None,
                      quantize: str | None = None) -> OpenAICompatibleChatModel:
    """The model ``openai:NAME`` on an OpenAI-compatible server.

    base_url: else OPENAI_BASE_URL, else OPENAI_API_BASE, else OpenAI's API. api_key: else OPENAI_API_KEY, else a
    placeholder for servers without auth. structured: else HIERPLAN_STRUCTURED, else "auto". timeout (seconds per
    request): else HIERPLAN_REMOTE_TIMEOUT, else DEFAULT_TIMEOUT_S. repetition_penalty_param: else
    HIERPLAN_REMOTE_REPETITION_PENALTY, else dropped. max_new_tokens: the default cap per call.
    No request is made here: a server that is down fails the first model call, inside the run.
    """

    name = model.strip()[len(PREFIX):].strip()
    if not name:
        raise UsageError(f"{model!r} names no model; use openai:NAME, e.g. openai:Qwen2.5-7B-Instruct")
    if device is not None or (quantize is not None and quantize != "none"):
        raise UsageError("--device and --quantize are for local models; a model server chooses its own")
    url = (base_url or os.environ.get("OPENAI_BASE_URL", "").strip() or os.environ.get("OPENAI_API_BASE", "").strip()
           or None)
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"base URL {public_url(url)!r} is not an http(s) URL (e.g. http://gpu-box:8000/v1)")
    mode = normalize_method(structured or os.environ.get(STRUCTURED_ENV, "").strip() or "auto")
    seconds = float(timeout) if timeout is not None else _env_float(TIMEOUT_ENV, DEFAULT_TIMEOUT_S)
    penalty = repetition_penalty_param or os.environ.get(PENALTY_ENV, "").strip() or None
    info = {"name": name, "kind": "remote", "base_url": public_url(url) if url else None, "structured": mode}
    chat = OpenAICompatibleChatModel(
        model=name, base_url=url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY,
        max_tokens=max_new_tokens, timeout=seconds, max_retries=MAX_RETRIES, stream_usage=True,
        structured=mode, repetition_penalty_param=penalty, metadata={"hierplan_model": info},
    )
    log.info("Remote model %s", info)
    return chat
