"""hierplan.server.factory in-process: options, caching, no checkpointer, and the signature the server reads."""

from __future__ import annotations

import json

import pytest

from fakes import ScriptedChatModel
from hierplan.server import factory
from hierplan.server.factory import OptionError, graph_for, make_factory, options_from
from needs import unavailable


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    monkeypatch.setattr(factory, "_models", {})
    monkeypatch.setattr(factory, "_graphs", {})
    monkeypatch.delenv(factory.DEFAULTS_ENV, raising=False)


def counting_loader():
    loads = []

    def load(model_options):
        loads.append(model_options)
        return ScriptedChatModel()

    return load, loads


def test_options_come_from_configurable_over_server_defaults_and_ignore_the_servers_own_keys(monkeypatch):
    monkeypatch.setenv(factory.DEFAULTS_ENV, json.dumps({"model": "m1", "temperature": 0.5, "approve": True}))
    config = {"configurable": {"thread_id": "t", "graph_id": "hierplan", "temperature": 0, "seed": 3,
                               "approve": None}}
    assert options_from(config) == {"model": "m1", "temperature": 0, "seed": 3, "approve": True}


@pytest.mark.parametrize("key,value", [("max_replans", "2"), ("max_replans", True), ("approve", "yes"),
                                       ("temperature", "hot"), ("model", 7)])
def test_a_wrongly_typed_option_is_an_error_the_server_shows(key, value):
    with pytest.raises(OptionError, match=key) as err:
        options_from({"configurable": {key: value}})
    assert isinstance(err.value, ValueError)  # LangGraph Server shows ValueError messages to the client


def test_one_model_load_per_model_options_one_compile_per_option_set():
    load, loads = counting_loader()
    a = graph_for({"model": "m"}, load)
    assert graph_for({"model": "m"}, load) is a
    b = graph_for({"model": "m", "approve": True}, load)  # another graph, the same model
    assert b is not a and "approval" in b.get_graph().nodes and "approval" not in a.get_graph().nodes
    graph_for({"model": "other"}, load)
    assert loads == [{"model": "m"}, {"model": "other"}]


def test_the_graph_has_no_checkpointer_and_keeps_the_recursion_limit():
    load, _ = counting_loader()
    graph = graph_for({}, load)
    assert graph.checkpointer is None
    assert graph.config["recursion_limit"] == factory.RECURSION_LIMIT


def test_only_execution_access_loads_the_model():
    load, loads = counting_loader()
    make_graph = make_factory(load)

    class Runtime:
        def __init__(self, access_context):
            self.access_context = access_context

    config = {"configurable": {"model": "m"}}
    for access in ("threads.read", "threads.update", "assistants.read"):
        make_graph(config, Runtime(access))
    assert loads == []
    make_graph(config, Runtime("threads.create_run"))
    assert loads == [{"model": "m"}]


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
    factory.load_local_model({"model": "openai:qwen", "base_url": "http://127.0.0.1:9/v1", "max_new_tokens": 64})
    assert calls == [("openai:qwen", {"base_url": "http://127.0.0.1:9/v1", "max_new_tokens": 64})]
    with pytest.raises(OptionError, match="password") as err:  # the client's mistake, shown to the client
        factory.load_local_model({"base_url": "http://u:pw@127.0.0.1:9/v1"})
    assert isinstance(err.value, ValueError)

