"""Tracing: OpenTelemetry spans for a run, every node, every model call and every tool or sandbox call.

Off unless asked for: by the standard OpenTelemetry variables (an OTLP endpoint, or ``OTEL_TRACES_EXPORTER``) or
by ``build_graph(tracing=...)``. The spans come from a LangChain callback handler (``OtelTracer``) that
build_graph binds into the compiled graph's config, so every entry point (Python, the CLI, the web page,
LangGraph Server, eval) gets them, and they follow the run tree LangSmith's tracer sees: the graph's run, each
node (its routers and inner runnables fold into it), each chat-model run, each tool run. Sandbox runs and
registered tools' calls are reported as tool runs (``traced_call``) to whatever tracers the run has: this one,
LangSmith's (``LANGSMITH_TRACING``, read by LangChain itself), a caller's own callbacks.

OpenTelemetry is imported only once tracing is on (the ``otel`` extra); without it, asking for tracing is one
UsageError line. Prompts and replies never go into a span (OpenTelemetry's GenAI conventions make content
opt-in); LangSmith, which a user turns on for exactly that, gets them.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from hierplan.errors import UsageError

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

T = TypeVar("T")

SERVICE_NAME = "hierplan"
"""service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one."""
TRACER_NAME = "hierplan"
SANDBOX_TOOL = "sandbox"
"""The tool name a sandbox run is reported under (span ``execute_tool sandbox``)."""
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROTOCOL_VARS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
EXTRA = "pip install 'hierplan[otel]'"


# --- turning it on ----------------------------------------------------------------------------------------

def requested(environ: Mapping[str, str] | None = None) -> str | None:
    """The variable that asks for tracing (its name), or None: an OTLP endpoint or an OTEL_TRACES_EXPORTER other
    than ``none``, unless OTEL_SDK_DISABLED is true (OpenTelemetry's own switch for everything)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    exporters = _exporters(env)
    if exporters is not None:
        return "OTEL_TRACES_EXPORTER" if exporters else None
    return next((name for name in ENDPOINT_VARS if env.get(name, "").strip()), None)


def _exporters(env: Mapping[str, str]) -> list[str] | None:
    """OTEL_TRACES_EXPORTER's exporters, ``none`` left out (None: the variable is not set)."""
    raw = env.get("OTEL_TRACES_EXPORTER", "").strip()
    if not raw:
        return None
    return [name for name in (part.strip().lower() for part in raw.split(",")) if name and name != "none"]


def callbacks(tracing: Any = None) -> list[BaseCallbackHandler]:
    """The callback handlers a graph is compiled with for ``tracing`` (build_graph's argument): [] when off."""
    if tracing is False or (tracing is None and requested() is None):
        return []
    provider = default_provider() if tracing is None or tracing is True else tracing
    if not callable(getattr(provider, "get_tracer", None)):
        raise TypeError(f"tracing must be None, True, False or an OpenTelemetry TracerProvider, got "
                        f"{type(provider).__name__}")
    from hierplan import __version__

    return [OtelTracer(provider.get_tracer(TRACER_NAME, __version__))]


def check() -> None:
    """Where the variables ask for traces: make the tracer provider now, so that traces hierplan cannot send (the
    extra missing, a protocol it does not speak) are one line before a run is recorded, not a run that failed."""
    if requested() is not None:
        default_provider()


_lock = threading.Lock()
_provider: Any = None


def default_provider() -> TracerProvider:
    """This process's tracer provider, made once: the application's global one where it set one (its own
    exporters, sampling, resource), else an SDK provider from the standard variables, then made the global one
    so that other instrumentation in this process (LangGraph Server's own spans) joins the same traces."""
    global _provider
    with _lock:
        if _provider is None:
            trace = _otel(requested() or "tracing=True")
            current = trace.get_tracer_provider()
            if isinstance(current, trace.ProxyTracerProvider):  # nobody set one
                current = provider_from_env()
                trace.set_tracer_provider(current)
            _provider = current
        return _provider


def provider_from_env() -> TracerProvider:
    """An SDK tracer provider as OpenTelemetry's variables describe it: OTEL_TRACES_EXPORTER (otlp, the default,
    or console), the OTLP exporter's OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression,
    certificates: read by the exporter itself), OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
    and OTEL_BSP_* (the batch processor's delay and sizes). Spans go out in batches from a background thread, and
    what is left at exit."""
    why = requested() or "tracing=True"
    _otel(why)
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    for name in _exporters(os.environ) or ["otlp"]:
        if name == "otlp":
            exporter = _otlp_exporter(why)
        elif name == "console":
            exporter = ConsoleSpanExporter()
        else:
            raise UsageError(f"OTEL_TRACES_EXPORTER={name!r}: hierplan exports traces with otlp (OTLP over HTTP) "
                             "or console")
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def flush() -> None:
    """Send what the tracers still hold: LangSmith's client batches runs on a background thread that a command
    ending at once would cut off (it lost every run after the first Python step's), and this module's spans
    (which also go at exit). A no-op where neither was used."""
    from langchain_core.tracers.langchain import wait_for_all_tracers

    wait_for_all_tracers()
    if _provider is not None and callable(getattr(_provider, "force_flush", None)):
        _provider.force_flush()


def _otlp_exporter(why: str) -> Any:
    protocol = next((os.environ[name].strip() for name in PROTOCOL_VARS if os.environ.get(name, "").strip()),
                    "http/protobuf")
    if protocol != "http/protobuf":
        raise UsageError(f"OTLP protocol {protocol!r}: hierplan exports traces over HTTP (http/protobuf, a "
                         "collector's port 4318); set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        raise UsageError(f"{why} asks for traces over OTLP, and OpenTelemetry's OTLP exporter is not "
                         f"installed: {EXTRA}") from None
    return OTLPSpanExporter()


def _otel(why: str) -> Any:
    """opentelemetry.trace, with the SDK there, or one UsageError line saying what asked for it."""
    try:
        import opentelemetry.sdk.trace  # noqa: F401
        from opentelemetry import trace
    except ImportError:
        raise UsageError(f"{why} asks for traces, and OpenTelemetry is not installed: {EXTRA}") from None
    return trace


# --- the spans ------------------------------------------------------------------------------------------------

class OtelTracer(BaseCallbackHandler):
    """A LangChain callback handler that turns a hierplan graph's runs into OpenTelemetry spans.

    The graph's own run is the root span ``invoke_agent hierplan`` (under the caller's current span, if any);
    each node's run (LangGraph's ``graph:step:N`` runs) a span named after the node; each chat-model run a
    ``chat MODEL`` span with the GenAI conventions' request and usage attributes; each tool run (a sandbox run, a
    registered tool's call) an ``execute_tool NAME`` span. Other runs (routers, a structured call's parser) are
    not spans of their own: what they start goes under their nearest traced ancestor. A tracing error is logged
    by LangChain, never raised into the run."""

    run_inline = True  # spans open in the order the runs start, on the thread that starts them
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self, tracer: Tracer):
        from opentelemetry import trace

        self._trace = trace
        self._tracer = tracer
        self._runs: dict[UUID, tuple[Span, bool]] = {}
        """run id -> (its span, or its nearest traced ancestor's; whether the span is its own)."""

    # runs of the graph: the run, its nodes, and what is folded into them
    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, tags: list[str] | None = None,
                       metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        meta = metadata or {}
        name = kwargs.get("name") or (serialized or {}).get("name") or "graph"
        parent = self._runs.get(parent_run_id) if parent_run_id else None
        if parent is None:  # the graph's own run: the first this handler sees
            self._open(run_id, None, f"invoke_agent {name}", {
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                "gen_ai.conversation.id": meta.get("thread_id"), "hierplan.run_id": meta.get("thread_id")})
        elif meta.get("langgraph_node") == name and any(t.startswith("graph:step:") for t in tags or ()):
            self._open(run_id, parent[0], name, {"hierplan.node": name, "langgraph.step": meta.get("langgraph_step")})
        else:
            self._runs[run_id] = (parent[0], False)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error)

    # model calls
    def on_chat_model_start(self, serialized: dict[str, Any] | None, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, tags: list[str] | None = None,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        meta = metadata or {}
        params = kwargs.get("invocation_params") or {}
        model = _model_name(meta, params)
        self._open(run_id, parent_run_id, f"chat {model}", {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": meta.get("ls_provider"),
            "gen_ai.request.model": model, "gen_ai.request.temperature": params.get("temperature"),
            "gen_ai.request.top_p": params.get("top_p"), "gen_ai.request.max_tokens": params.get("max_tokens"),
            "gen_ai.request.seed": params.get("seed"),
            # hierplan.nodes.model_call passes the call's node as its records name it (the checker's program is
            # "python_check") and the run's seed, of which gen_ai.request.seed is derived
            "hierplan.node": meta.get("hierplan_node") or meta.get("langgraph_node"),
            "hierplan.seed": meta.get("hierplan_seed")}, kind=self._trace.SpanKind.CLIENT)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        span = self._own(run_id)
        if span is not None:
            generations = getattr(response, "generations", None) or [[]]
            generation = generations[0][0] if generations[0] else None
            message = getattr(generation, "message", None)
            usage = getattr(message, "usage_metadata", None) or {}
            meta = getattr(message, "response_metadata", None) or {}
            _set(span, {"gen_ai.usage.input_tokens": usage.get("input_tokens"),
                        "gen_ai.usage.output_tokens": usage.get("output_tokens"),
                        "gen_ai.response.model": meta.get("model_name") or meta.get("model"),
                        "gen_ai.response.finish_reasons": [meta["finish_reason"]]
                        if isinstance(meta.get("finish_reason"), str) else None})
        self._close(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error)

    # tool calls: sandbox runs and registered tools (traced_call)
    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                      **kwargs: Any) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        self._open(run_id, parent_run_id, f"execute_tool {name}", {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
            "hierplan.node": (metadata or {}).get("langgraph_node")})

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        span = self._own(run_id)
        if span is not None and isinstance(output, Mapping) and "ok" in output:
            _set(span, {"hierplan.ok": bool(output["ok"]), "hierplan.exit_reason": output.get("exit_reason"),
                        "hierplan.sandbox.level": output.get("level")})
            if not output["ok"]:  # a failed program or tool call: the step's failure, not the tracer's
                span.set_attribute("error.type", str(output.get("exit_reason") or "tool_error"))
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, _first_line(output.get("error"))))
        self._close(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error)

    # the span table
    def _open(self, run_id: UUID, parent: Any, name: str, attributes: Mapping[str, Any], kind: Any = None) -> None:
        """Start ``run_id``'s span under ``parent`` (a span, a parent run's id, or None: the current context)."""
        if isinstance(parent, UUID):
            parent = (self._runs.get(parent) or (None,))[0]
        context = self._trace.set_span_in_context(parent) if parent is not None else None
        span = self._tracer.start_span(name, context=context, kind=kind or self._trace.SpanKind.INTERNAL,
                                       attributes={k: v for k, v in attributes.items() if v is not None})
        self._runs[run_id] = (span, True)

    def _own(self, run_id: UUID) -> Span | None:
        entry = self._runs.get(run_id)
        return entry[0] if entry and entry[1] else None

    def _close(self, run_id: UUID, error: BaseException | None = None) -> None:
        span, own = self._runs.pop(run_id, (None, False))
        if not own:
            return
        if error is not None:
            if _bubbles_up(error):  # an interrupt (a plan waiting for approval) is how the run stops, not a failure
                span.set_attribute("hierplan.interrupted", True)
            else:
                span.record_exception(error)
                span.set_attribute("error.type", type(error).__qualname__)
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, _first_line(str(error))))
        span.end()


def _model_name(meta: Mapping[str, Any], params: Mapping[str, Any]) -> str:
    """The model's name as the model says it: LangSmith's ``ls_model_name``, hierplan's own record of a model it
    loaded, the request's model, else the model class's type."""
    loaded = meta.get("hierplan_model") if isinstance(meta.get("hierplan_model"), Mapping) else {}
    return str(meta.get("ls_model_name") or loaded.get("name") or params.get("model") or params.get("model_name")
               or params.get("_type") or "model")


def _set(span: Span, attributes: Mapping[str, Any]) -> None:
    for key, value in attributes.items():
        if value is not None:
            span.set_attribute(key, value)


def _first_line(text: Any) -> str | None:
    return str(text).strip().splitlines()[0][:200] if text and str(text).strip() else None


def _bubbles_up(error: BaseException) -> bool:
    from langgraph.errors import GraphBubbleUp

    return isinstance(error, GraphBubbleUp)


# --- tool runs --------------------------------------------------------------------------------------------------

def traced_call(name: str, inputs: dict[str, Any], call: Callable[[], T],
                outcome: Callable[[T], dict[str, Any]]) -> T:
    """``call()``, reported as a tool run named ``name`` to the callbacks of the run it is part of (this module's
    tracer, LangSmith's, a caller's); ``outcome(result)`` is what the run records as its output: ``ok``, and
    ``error``, ``exit_reason`` where it failed. Outside a graph run, or in a run without callbacks, it is just
    ``call()``."""
    manager = _callback_manager()
    if manager is None:
        return call()
    run = manager.on_tool_start({"name": name}, str(inputs), name=name, inputs=inputs)
    try:
        result = call()
    except BaseException as exc:
        run.on_tool_error(exc)
        raise
    run.on_tool_end(outcome(result), name=name)
    return result


def _callback_manager() -> Any:
    from langchain_core.runnables.config import get_callback_manager_for_config, var_child_runnable_config

    config = var_child_runnable_config.get()
    if not config:
        return None
    manager = get_callback_manager_for_config(config)
    return manager if manager.handlers else None


def traced_runner(run_code: Callable[..., Any]) -> Callable[..., Any]:
    """A sandbox runner (hierplan.nodes.python_step.CodeRunner) whose every run is a tool run named ``sandbox``,
    recording whether the program ran clean, its exit reason and the sandbox's isolation level."""

    def run(code: str, before: Sequence[str] = (), **kwargs: Any) -> Any:
        return traced_call(SANDBOX_TOOL, {"code": code}, lambda: run_code(code, before=before, **kwargs),
                           sandbox_outcome)

    run.__wrapped__ = run_code  # type: ignore[attr-defined]
    return run


def sandbox_outcome(result: Any) -> dict[str, Any]:
    """A sandbox run's output as a tool run records it (ExecutionResult's facts, not the files it saved)."""
    return {"ok": bool(getattr(result, "ok", False)), "exit_reason": getattr(result, "exit_reason", None),
            "error": getattr(result, "error", None), "stdout": getattr(result, "stdout", None),
            "level": getattr(result, "level", None)}
