"""The graph factory LangGraph Server calls on every run and every state read.

It reads the agent's options from the assistant's (or the run's) ``configurable``, under server-wide defaults
(``hierplan serve --model ...`` passes them in $HIERPLAN_SERVER_DEFAULTS), and compiles the graph WITHOUT a
checkpointer: the server copies in its own (in-memory, or Postgres through langgraph.json's ``checkpointer``).

Loaded models and compiled graphs are cached here, keyed by their options. This module is the server's
entry point, not a node: the server calls the factory with only a config and its runtime, so the cache cannot
be passed in and has to live at module level. A second call with the same options reloads nothing. Every
model a client names stays loaded: the server trusts its clients (langgraph dev has no authentication).
"""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING, Any, Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from hierplan.cli import options as cli_options
from hierplan.config import RECURSION_LIMIT
from hierplan.errors import UsageError

if TYPE_CHECKING:  # the server resolves this annotation itself; hierplan does not need langgraph_sdk to import
    from langgraph_sdk.runtime import ServerRuntime

DEFAULTS_ENV = "HIERPLAN_SERVER_DEFAULTS"

# Options a client may set per assistant or per run, with the types they must have.
# Those in cli_options.LOAD_KEYS choose the model; the rest shape the graph, as on the command line.
OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "model": (str,), "base_url": (str,), "engine": (str,), "device": (str,), "quantize": (str,),
    "max_new_tokens": (int,),
    "temperature": (int, float), "seed": (int,), "max_replans": (int,),
    "sequential": (bool,), "approve": (bool,), "no_constrain": (bool,),
}
OPTION_KEYS = tuple(OPTION_TYPES)
# Distinct option sets kept compiled at once; a server sees a handful (one per assistant), not thousands.
MAX_CACHED_GRAPHS = 64

ModelLoader = Callable[[dict[str, Any]], BaseChatModel]
# The one access for which the server runs nodes; for the others (state reads, history, drawings, state
# updates) it only needs the graph's shape.
EXECUTION = "threads.create_run"


class OptionError(UsageError, ValueError):
    """A bad ``configurable`` option. Also a ValueError: LangGraph Server shows a ValueError's message to the
    client and hides other exceptions' messages behind "An internal error occurred"."""


_lock = threading.Lock()
_models: dict[tuple, BaseChatModel] = {}
_graphs: dict[tuple, Any] = {}


def make_factory(load_model: ModelLoader) -> Callable[..., Any]:
    """A LangGraph Server graph factory over ``load_model`` (tests use one over a scripted model)."""

    def make_graph(config: RunnableConfig, runtime: ServerRuntime) -> Any:
        """langgraph-api 0.16.7 classifies factories by signature: given a config parameter and one annotated
        ServerRuntime it passes both. Only a run loads the model; reading a thread, its history or the graph's
        drawing gets the same graph without one (nodes only call their model when they run)."""
        return graph_for(options_from(config), load_model if runtime.access_context == EXECUTION else None)

    return make_graph


def options_from(config: RunnableConfig | None) -> dict[str, Any]:
    """hierplan's options from ``config["configurable"]`` over the server defaults; other keys are ignored
    (the server puts its own there: thread_id, graph_id, ...). A wrong type is an OptionError."""
    defaults = json.loads(os.environ.get(DEFAULTS_ENV) or "{}")
    configurable = (config or {}).get("configurable") or {}
    given = {k: v for k, v in configurable.items() if k in OPTION_TYPES and v is not None}  # None: not given
    options = {**{k: v for k, v in defaults.items() if k in OPTION_TYPES}, **given}
    for key, value in options.items():
        # bool is an int in Python: reject True where a number is wanted
        if not isinstance(value, OPTION_TYPES[key]) or (isinstance(value, bool) and bool not in OPTION_TYPES[key]):
            raise OptionError(f"configurable {key}={value!r}: expected {OPTION_TYPES[key][0].__name__}")
    return options


def graph_for(options: dict[str, Any], load_model: ModelLoader | None) -> Any:
    """The compiled graph for these options, built once; the model for its model options, loaded once.
    ``load_model=None``: a graph without a model, for access that runs no node."""
    key = (load_model, tuple(sorted(options.items())))
    with _lock:  # one load at a time: two first runs must not load the same model twice
        graph = _graphs.get(key)
        if graph is None:
            graph = _compile(_model(options, load_model) if load_model else None, options)
            if len(_graphs) >= MAX_CACHED_GRAPHS:
                _graphs.pop(next(iter(_graphs)))
            _graphs[key] = graph
    return graph


def _model(options: dict[str, Any], load_model: ModelLoader) -> BaseChatModel:
    model_options = {k: options[k] for k in cli_options.LOAD_KEYS if k in options}
    key = (load_model, tuple(sorted(model_options.items())))
    if key not in _models:
        _models[key] = load_model(model_options)
    return _models[key]


def load_local_model(model_options: dict[str, Any]) -> BaseChatModel:
    """The model hierplan's CLI loads for the same options (``base_url``: an OpenAI-compatible server)."""
    try:
        return cli_options.load_model(model_options)
    except UsageError as exc:  # a bad option value (a base_url with a password): the client's to fix
        raise OptionError(f"configurable: {exc}") from exc


make_graph = make_factory(load_local_model)


def _compile(model: BaseChatModel | None, options: dict[str, Any]) -> Any:
    from hierplan.graph.builder import wire

    graph = wire(model, **cli_options.graph_kwargs(options))
    # No checkpointer: the server brings its own (and refuses a graph that has one).
    return graph.compile(name="hierplan").with_config({"recursion_limit": RECURSION_LIMIT})
