"""hierplan.server.factory in-process: options, caching, no checkpointer, per-run context and durability, and the
signature the server reads."""

from __future__ import annotations

import json

import pytest

from fakes import ScriptedChatModel, plan_json
from hierplan.config import RECURSION_LIMIT
from hierplan.options import RunOptions
from hierplan.server import factory
from hierplan.server.factory import OptionError, ServerGraph, graph_for, make_factory, options_from
from needs import unavailable


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    monkeypatch.setattr(factory, "_models", {})
    monkeypatch.setattr(factory, "_graphs", {})
    monkeypatch.delenv(factory.DEFAULTS_ENV, raising=False)


def counting_loader():
    loads = []

    def load(options):
        loads.append(options)
        return ScriptedChatModel(default={"planner": plan_json(["llm", "llm", "llm"])})

    return load, loads


class Runtime:
    """What langgraph-api passes a factory: an execution runtime (with the run's context) only for a run."""

    def __init__(self, access_context, context=None):
        self.access_context, self.context = access_context, context

    @property
    def execution_runtime(self):
        return self if self.access_context == "threads.create_run" else None


def test_options_come_from_configurable_and_context_over_server_defaults_ignoring_the_servers_own_keys(
        monkeypatch):
    monkeypatch.setenv(factory.DEFAULTS_ENV, json.dumps({"model": "m1", "temperature": 0.5, "approve": True}))
    config = {"configurable": {"thread_id": "t", "graph_id": "hierplan", "temperature": 0, "seed": 3,
                               "approve": None, "sequential": True}}
    assert options_from(config) == RunOptions(model="m1", temperature=0, seed=3, approve=True, parallel=False)
    context = {"seed": 4, "max_repairs": 0, "thread_id": "t"}  # a run's context wins over configurable
    assert options_from(config, context) == RunOptions(model="m1", temperature=0, seed=4, approve=True,
                                                       parallel=False, max_repairs=0)


@pytest.mark.parametrize("key,value", [("max_replans", "2"), ("max_replans", True), ("approve", "yes"),
                                       ("temperature", "hot"), ("model", 7), ("engine", "vllm"),
                                       ("max_repairs", -1)])
def test_a_wrongly_typed_option_is_an_error_the_server_shows(key, value):
    with pytest.raises(OptionError, match=key) as err:
        options_from({"configurable": {key: value}})
    assert isinstance(err.value, ValueError)  # LangGraph Server shows ValueError messages to the client
    with pytest.raises(OptionError, match=key):
        options_from({}, {key: value})


def test_one_model_load_and_one_compile_per_model_options_whatever_the_run_options():
    load, loads = counting_loader()
    a = graph_for(RunOptions(model="m"), load)
    b = graph_for(RunOptions(model="m", approve=True, seed=3), load)  # the same compiled graph, other options
    assert a.nodes["planner"] is b.nodes["planner"] and (a.run_options.approve, b.run_options.approve) == (False, True)
    graph_for(RunOptions(model="other"), load)
    assert [o.model for o in loads] == ["m", "other"]


def test_the_graph_has_no_checkpointer_and_keeps_the_recursion_limit():
    from langgraph.checkpoint.base import BaseCheckpointSaver

    load, _ = counting_loader()
    graph = graph_for(RunOptions(), load)
    assert isinstance(graph, ServerGraph) and not isinstance(graph.checkpointer, BaseCheckpointSaver)
    assert graph.config["recursion_limit"] == RECURSION_LIMIT


def test_a_server_run_gets_its_options_as_context_and_durability_sync_unless_it_asked_for_exit(monkeypatch):
    """LangGraph Server passes the run's raw context and durability "async" when the client named none."""
    from langgraph.graph.state import CompiledStateGraph

    seen = []
    monkeypatch.setattr(CompiledStateGraph, "astream", lambda self, input, config=None, **kwargs: seen.append(kwargs))
    load, _ = counting_loader()
    graph = graph_for(RunOptions(approve=True), load).copy(update={"checkpointer": None})  # as the server does
    graph.astream({"task": "t"}, {}, context={"approve": False}, durability="async", stream_mode=["updates"])
    graph.astream(None, {}, context=None, durability="exit")
    assert seen[0] == {"context": RunOptions(approve=True), "durability": "sync", "stream_mode": ["updates"]}
    assert seen[1]["durability"] == "exit"


def test_a_server_run_with_approve_in_its_options_stops_for_approval():
    """The graph the factory gives, copied with a checkpointer as the server copies it, run as the server runs it."""
    import asyncio

    from langgraph.checkpoint.memory import InMemorySaver

    load, _ = counting_loader()
    make_graph = make_factory(load)
    config = {"configurable": {"thread_id": "t1"}}
    graph = make_graph(config, Runtime("threads.create_run", {"approve": True})).copy(
        update={"checkpointer": InMemorySaver()})

    async def run():
        return [chunk async for chunk in graph.astream({"task": "Write a haiku"}, config, context={},
                                                       durability="async", stream_mode="updates")]

    updates = asyncio.run(run())
    assert "__interrupt__" in updates[-1] and graph.get_state(config).next == ("approval",)


def test_only_execution_access_loads_the_model():
    load, loads = counting_loader()
    make_graph = make_factory(load)
    config = {"configurable": {"model": "m"}}
    for access in ("threads.read", "threads.update", "assistants.read"):
        make_graph(config, Runtime(access))
    assert loads == []
    graph = make_graph(config, Runtime("threads.create_run", {"seed": 5}))
    assert [o.model for o in loads] == ["m"] and graph.run_options == RunOptions(model="m", seed=5)


def test_langgraph_api_passes_the_factory_both_config_and_runtime():
    """The factory's signature is read by langgraph-api (_factory_utils, not public): fails if that changes."""
    try:
        from langgraph_api._factory_utils import _classify_factory
    except ImportError:
        unavailable("langgraph-api is not installed (pip install 'hierplan[server]')")
    hook = _classify_factory(factory.make_graph)
    assert hook("CONFIG", "RUNTIME") == {"config": "CONFIG", "runtime": "RUNTIME"}


def test_the_default_loader_is_the_clis_and_passes_base_url_through(monkeypatch):
    import hierplan.models

    calls = []
    monkeypatch.setattr(hierplan.models, "load_chat_model",
                        lambda model, **kwargs: calls.append((model, kwargs)) or ScriptedChatModel(), raising=False)
    factory.load_local_model(RunOptions(model="openai:qwen", base_url="http://127.0.0.1:9/v1", max_new_tokens=64))
    assert calls == [("openai:qwen", {"base_url": "http://127.0.0.1:9/v1", "max_new_tokens": 64})]
    with pytest.raises(OptionError, match="password") as err:  # the client's mistake, shown to the client
        options_from({"configurable": {"base_url": "http://u:pw@127.0.0.1:9/v1"}})
    assert isinstance(err.value, ValueError)
