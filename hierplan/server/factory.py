"""The graph factory LangGraph Server calls on every run and every state read.

A run's options (RunOptions) come from the assistant's and the run's ``configurable`` or ``context`` (LangGraph
Server mirrors one into the other), over server-wide defaults (``hierplan serve --model ...`` passes them in
$HIERPLAN_SERVER_DEFAULTS), checked as hierplan.app.fields checks every option. The graph is compiled by
build_graph, as for every entry point, WITHOUT a checkpointer (the server brings its own: in-memory, or
Postgres through langgraph.json's ``checkpointer``), once per loaded model; each run gets a copy that runs with
its options as the context and with durability "sync" (ServerGraph).

A JSON Schema as ``response_format`` in the configurable or context (build_graph's response_format) gives a graph
with the structured_answer node, whose final state holds ``structured_response``; pass it on every call for the
thread (reading its state too), as the graph's shape depends on it.

Loaded models and compiled graphs are cached here, keyed by the model's options (and the MCP servers' file of
``hierplan serve --mcp`` with the servers of it a client's ``mcp_servers`` chooses, by name, whose tools are listed
once per graph, and the response_format: one graph per schema). This module is the server's
entry point, not a node: the server calls the factory with only a config and its runtime, so the cache cannot
be passed in and has to live at module level. Every model a client names stays loaded: the server trusts its
clients (langgraph dev has no authentication).
"""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableBinding, RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from hierplan.app.fields import OptionError, from_mapping
from hierplan.options import RunOptions

if TYPE_CHECKING:  # the server resolves this annotation itself; hierplan does not need langgraph_sdk to import
    from langgraph_sdk.runtime import ServerRuntime

__all__ = ["OptionError", "ServerGraph", "graph_for", "make_factory", "make_graph", "options_from",
           "response_format_from"]

DEFAULTS_ENV = "HIERPLAN_SERVER_DEFAULTS"
RESPONSE_FORMAT_KEY = "response_format"
"""The configurable (or context) key of a run's JSON Schema for its answer."""
# LangGraph Server passes durability on every run, "async" when the client named none; hierplan's is "sync"
# (graph.builder.DURABILITY), so a server killed mid-run loses no finished step.

ModelLoader = Callable[[RunOptions], BaseChatModel]

_lock = threading.Lock()
_models: dict[tuple, BaseChatModel] = {}
_graphs: dict[tuple, CompiledStateGraph] = {}


class ServerGraph(CompiledStateGraph):
    """hierplan's compiled graph as LangGraph Server runs it: with the run's options as its context and with
    durability "sync" unless the client asked for "exit". The server passes both to the graph on every run (the
    run's context filtered to RunOptions' fields, which misses the assistant's configurable and the server's
    defaults; durability "async" when the client named none), and takes only a compiled graph, not a binding,
    so they are set here, where the graph runs. The server copies the graph per run; ``copy`` keeps
    ``run_options`` (it rebuilds the graph from its attributes)."""

    def __init__(self, *, run_options: RunOptions | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.run_options = run_options or RunOptions()

    def astream(self, input: Any, config: RunnableConfig | None = None, *, context: Any = None,
                durability: Any = None, **kwargs: Any):
        # Every way the server runs a graph (astream, astream_events v2 and v3) goes through astream.
        return super().astream(input, config, context=self.run_options,
                               durability=_durability(durability), **kwargs)


def make_factory(load_model: ModelLoader) -> Callable[..., Any]:
    """A LangGraph Server graph factory over ``load_model`` (tests use one over a scripted model)."""

    def make_graph(config: RunnableConfig, runtime: ServerRuntime) -> Any:
        """langgraph-api 0.16.7 classifies factories by signature: given a config parameter and one annotated
        ServerRuntime it passes both. Only a run loads the model (and has a context); reading a thread, its
        history or the graph's drawing gets the same graph without one (nodes only call their model when they
        run)."""
        run = runtime.execution_runtime
        context = run.context if run is not None else None
        options = options_from(config, context)
        return graph_for(options, load_model if run is not None else None, response_format_from(config, context))

    return make_graph


def options_from(config: RunnableConfig | None, context: Mapping[str, Any] | None = None) -> RunOptions:
    """The run's options: the server defaults, under the run's ``configurable``, under its ``context``; other
    keys are ignored (the server puts its own there: thread_id, graph_id, ...). A bad value is an OptionError."""
    # The server's own defaults may name its MCP servers (hierplan serve --mcp); a client may not.
    given = from_mapping(json.loads(os.environ.get(DEFAULTS_ENV) or "{}"), host=True)
    for layer in ((config or {}).get("configurable") or {}, context or {}):
        given.update(from_mapping(_names_joined(layer)))
    return RunOptions.from_dict(given)


def _names_joined(layer: Mapping[str, Any]) -> Mapping[str, Any]:
    """``mcp_servers`` as a client may give it in JSON, a list of names, as the option holds it (comma-separated)."""
    names = layer.get("mcp_servers")
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        return {**layer, "mcp_servers": ",".join(names)}
    return layer


def response_format_from(config: RunnableConfig | None, context: Mapping[str, Any] | None = None
                         ) -> dict[str, Any] | None:
    """The run's JSON Schema for its answer: ``response_format`` in its context, else its configurable; None when
    neither gives one. One that is not a JSON Schema of an object is an OptionError (the client sees it)."""
    from hierplan.schema import check_response_format

    given = next((layer[RESPONSE_FORMAT_KEY] for layer in (context or {}, (config or {}).get("configurable") or {})
                  if layer.get(RESPONSE_FORMAT_KEY) is not None), None)
    if given is None:
        return None
    try:
        return check_response_format(given)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{RESPONSE_FORMAT_KEY}: {exc}") from None


def graph_for(options: RunOptions, load_model: ModelLoader | None,
              response_format: dict[str, Any] | None = None) -> ServerGraph:
    """The graph a run with these options runs: compiled once per model (loaded once per model options) and
    response_format. ``load_model=None``: a graph without a model, for access that runs no node."""
    schema = json.dumps(response_format, sort_keys=True) if response_format is not None else None
    key = (load_model, tuple(sorted(options.load_options().items())) if load_model else (),
           (options.mcp, options.mcp_servers) if load_model else None, schema)
    with _lock:  # one load at a time: two first runs must not load the same model twice
        compiled = _graphs.get(key)
        if compiled is None:
            compiled = _graphs[key] = (
                _compile(_role_models(options, load_model), _tools(options), response_format) if load_model
                else _compile(None, response_format=response_format))
    return ServerGraph(**_attributes(compiled), run_options=options)


def _role_models(options: RunOptions, load_model: ModelLoader) -> dict[str, BaseChatModel]:
    """Each role's model (hierplan.roles): a model named by several roles or graphs is loaded once."""
    from hierplan.app.agent import load_models

    return load_models(options, lambda role_options: _model(role_options, load_model))


def _model(options: RunOptions, load_model: ModelLoader) -> BaseChatModel:
    key = (load_model, tuple(sorted(options.load_options().items())))
    if key not in _models:
        _models[key] = load_model(options)
    return _models[key]


def load_local_model(options: RunOptions) -> BaseChatModel:
    """The model hierplan's CLI loads for the same options (``base_url``: an OpenAI-compatible server)."""
    from hierplan.app.agent import load_model

    return load_model(options)


make_graph = make_factory(load_local_model)


def _tools(options: RunOptions) -> list[Any]:
    """The tools of the server's MCP servers (``hierplan serve --mcp``; those a client's ``mcp_servers`` names,
    where it names some), listed once per compiled graph. A client names servers of the host's file only, never
    a program: a name the file does not have is an OptionError the client sees."""
    from hierplan.app.agent import load_tools
    from hierplan.errors import UsageError

    try:
        return load_tools(options)
    except UsageError as exc:
        raise OptionError(str(exc)) from None


def _compile(model: Mapping[str, BaseChatModel] | None, tools: list[Any] | None = None,
             response_format: dict[str, Any] | None = None) -> CompiledStateGraph:
    from hierplan.graph.builder import build_graph

    graph = build_graph(model, checkpointer=False, tools=tools or (), file_store=_file_store() if model else None,
                        response_format=response_format)
    # build_graph binds its defaults (durability, context) for in-process callers; the server takes the compiled
    # graph itself, and ServerGraph sets both per run.
    return graph.bound if isinstance(graph, RunnableBinding) else graph


def _file_store() -> Any:
    """The server database's file store (hierplan.store.files), where its runs' files and saved files are kept;
    this process's temporary one on an in-memory server."""
    from hierplan.server.checkpointer import DB_ENV
    from hierplan.store import MEMORY, open_file_store

    return open_file_store(os.environ.get(DB_ENV) or MEMORY)


def _attributes(graph: CompiledStateGraph) -> dict[str, Any]:
    """What the graph is built from: a copy with another class (as Pregel.copy rebuilds one)."""
    return {k: v for k, v in graph.__dict__.items() if k not in ("__orig_class__", "run_options")}


def _durability(asked: Any) -> Any:
    """What the client asked for, except LangGraph Server's own default ("async"), which becomes hierplan's."""
    from hierplan.graph.builder import DURABILITY

    return DURABILITY if asked in (None, "async") else asked
