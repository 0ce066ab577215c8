"""Remote models without a running server: routing, options, the key, request fields, the schema sent, and a
real refused connection (a closed loopback port). Tests against running servers: test_remote_server.py."""

from __future__ import annotations

import json

import pytest
from langchain_core.load import dumpd
from langchain_core.messages import HumanMessage

from hierplan.errors import RemoteModelError, UsageError
from hierplan.models import load_chat_model
from hierplan.models.remote.chat import NO_KEY, OpenAICompatibleChatModel, public_url
from hierplan.models.remote.structured import request_kwargs, server_schema
from hierplan.nodes import prompts
from hierplan.schema import DraftPlan
from servers.launch import free_port

SECRET = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "HIERPLAN_STRUCTURED",
                 "HIERPLAN_REMOTE_TIMEOUT", "HIERPLAN_REMOTE_REPETITION_PENALTY"):
        monkeypatch.delenv(name, raising=False)


def test_openai_specs_load_a_remote_model_without_any_request(monkeypatch):
    port = free_port()  # nothing listens: loading must not touch the server
    chat = load_chat_model("openai:Qwen2.5-7B-Instruct", base_url=f"http://127.0.0.1:{port}/v1", max_new_tokens=77)
    assert isinstance(chat, OpenAICompatibleChatModel)
    assert chat.model_name == "Qwen2.5-7B-Instruct" and chat.max_tokens == 77
    assert chat.metadata["hierplan_model"] == {"name": "Qwen2.5-7B-Instruct", "kind": "remote", "structured": "auto",
                                               "base_url": f"http://127.0.0.1:{port}/v1"}

    monkeypatch.setenv("HIERPLAN_MODEL", "openai:from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu-box:8000/v1")
    chat = load_chat_model()
    assert chat.model_name == "from-env" and chat.server == "http://gpu-box:8000/v1"

    import hierplan

    assert hierplan.load_chat_model("openai:x", base_url="http://h/v1").model_name == "x"


def test_base_url_is_refused_for_local_models():
    with pytest.raises(UsageError, match="--base-url is for models on a server"):
        load_chat_model("some/model.gguf", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(UsageError, match="the default model"):
        load_chat_model(base_url="http://127.0.0.1:1/v1")


@pytest.mark.parametrize("kwargs, message", [
    ({"model": "openai:"}, "names no model"),
    ({"model": "openai:m", "base_url": "ftp://host/v1"}, "not an http"),
    ({"model": "openai:m", "base_url": "http://"}, "not an http"),
    ({"model": "openai:m", "structured": "xml"}, "structured output method 'xml'"),
    ({"model": "openai:m", "device": "cuda"}, "--device and --quantize are for local models"),
    ({"model": "openai:m", "quantize": "4bit"}, "--device and --quantize are for local models"),
])
def test_bad_remote_options_are_usage_errors(kwargs, message):
    with pytest.raises(UsageError, match=message):
        load_chat_model(**kwargs)


def test_bad_timeout_env_is_a_usage_error(monkeypatch):
    monkeypatch.setenv("HIERPLAN_REMOTE_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="HIERPLAN_REMOTE_TIMEOUT"):
        load_chat_model("openai:m")
    monkeypatch.setenv("HIERPLAN_REMOTE_TIMEOUT", "2.5")
    assert load_chat_model("openai:m").request_timeout == 2.5


def test_the_api_key_is_used_but_never_shown(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    chat = load_chat_model("openai:m", base_url="http://user:pw@127.0.0.1:8000/v1?token=t")
    assert chat.openai_api_key.get_secret_value() == SECRET
    shown = [repr(chat), str(chat), json.dumps(chat.metadata), json.dumps(dumpd(chat), default=str)]
    assert all(SECRET not in text for text in shown)
    # Credentials in the URL are not shown either.
    assert chat.metadata["hierplan_model"]["base_url"] == "http://127.0.0.1:8000/v1"
    assert all("user:pw" not in text and "token=t" not in text for text in shown)
    assert public_url("https://u:p@[::1]:9/v1/?k=v#f") == "https://[::1]:9/v1"


def test_without_a_key_a_placeholder_is_sent():
    assert load_chat_model("openai:m").openai_api_key.get_secret_value() == NO_KEY


def test_contract_sampling_kwargs_become_fields_the_server_takes(monkeypatch):
    chat = load_chat_model("openai:m")
    fields = chat._request_kwargs({"temperature": 0, "top_p": 0.9, "max_tokens": 5, "seed": 7,
                                   "repetition_penalty": 1.05})
    # max_tokens stays max_tokens (llama.cpp ignores max_completion_tokens); no server-unknown penalty is sent.
    assert fields == {"temperature": 0, "top_p": 0.9, "max_tokens": 5, "seed": 7}
    assert chat._request_kwargs({"max_completion_tokens": 9}) == {"max_tokens": 9}

    monkeypatch.setenv("HIERPLAN_REMOTE_REPETITION_PENALTY", "repeat_penalty")
    chat = load_chat_model("openai:m")
    fields = chat._request_kwargs({"repetition_penalty": 1.1, "extra_body": {"top_k": 5}})
    assert fields == {"extra_body": {"top_k": 5, "repeat_penalty": 1.1}}


def test_structured_methods_are_chosen_explicitly_or_off(monkeypatch):
    monkeypatch.setenv("HIERPLAN_STRUCTURED", "none")
    chat = load_chat_model("openai:m")
    with pytest.raises(NotImplementedError, match="structured output is off"):
        chat.with_structured_output(DraftPlan, include_raw=True)
    monkeypatch.setenv("HIERPLAN_STRUCTURED", "json_mode")  # langchain's name is accepted
    assert load_chat_model("openai:m").structured_method() == "json_object"
    assert load_chat_model("openai:m", structured="function_calling").structured_method() == "tool_calling"


def test_request_shapes():
    schema = {"type": "object"}
    assert request_kwargs("json_schema", schema, "P")["extra_body"]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "P", "schema": schema}}
    assert request_kwargs("json_object", schema, "P")["extra_body"]["response_format"] == {
        "type": "json_object", "schema": schema}
    tools = request_kwargs("tool_calling", schema, "P")
    assert tools["tools"][0]["function"]["parameters"] == schema
    assert tools["tool_choice"] == {"type": "function", "function": {"name": "P"}}


def _plan(ids, depends=None):
    return {"goal": "g", "assumptions": [],
            "steps": [{"id": i, "title": "t", "instruction": "i", "tool": "llm", "expected_output": "",
                       "depends_on": (depends or {}).get(i)} for i in ids]}


def test_the_schema_sent_admits_only_plans_the_validators_accept():
    jsonschema = pytest.importorskip("jsonschema")
    sent = server_schema(DraftPlan)
    valid = [plan for shown in prompts.PLANNER_EXAMPLES.values() for _, plan in shown] + [
        _plan([1]), _plan([1, 2]), _plan([1, 2, 3]), _plan(range(1, 9), {3: [1, 2]})]
    for plan in valid:
        DraftPlan.model_validate(plan)
        jsonschema.validate(plan, sent)
    # Each of these passes the pydantic field types but not the plan's validators: the server must not emit them.
    for plan in (_plan([2, 1, 3]), _plan([1, 2, 3], {2: [2]}), _plan([1, 2, 3], {1: [3]}), _plan([2]),
                 _plan([]), _plan(range(1, 10)), {**_plan([1, 2, 3]), "extra": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(plan, sent)
    assert "$ref" not in json.dumps(sent)


def test_a_closed_port_is_one_clear_line_without_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    port = free_port()
    chat = load_chat_model("openai:m", base_url=f"http://127.0.0.1:{port}/v1")
    for call in (lambda: chat.invoke("hi"), lambda: list(chat.stream("hi")),
                 lambda: chat.batch([[HumanMessage("a")], [HumanMessage("b")]]),
                 # The probe behind structured output does not mistake a dead server for one without formats.
                 lambda: chat.with_structured_output(DraftPlan, include_raw=True).invoke("plan")):
        with pytest.raises(RemoteModelError) as caught:
            call()
        text = str(caught.value)
        assert f"127.0.0.1:{port}" in text and "connection refused" in text
        assert "\n" not in text and SECRET not in text and caught.value.status is None


def _subschemas(node):
    """Every schema nested in ``node`` (not ``node`` itself), as JSON Schema places them."""
    for key in ("items", "not", "contains", "additionalItems"):
        if key in node:
            yield node[key]
    for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
        yield from node.get(key, [])
    yield from node.get("properties", {}).values()


def test_every_subschema_sent_is_an_object_as_llama_cpp_requires():
    """llama.cpp's server answers 400 "schema must be an object" to a boolean subschema (``"items": false``)."""
    from hierplan.schema import DraftRevision

    for schema in (DraftPlan, DraftRevision):
        for budget in (None, 650, 60):
            pending, seen = [server_schema(schema, budget=budget)], 0
            while pending:
                node = pending.pop()
                assert isinstance(node, dict), (schema.__name__, budget, node)
                pending.extend(_subschemas(node))
                seen += 1
            assert seen >= 10  # the walk reached the steps' fields


REFUSAL = "Unable to generate parser for this template. JSON schema error at #/properties/steps: bad"


def _stub_model(answer, **kwargs):
    """A remote model whose HTTP goes to ``answer(method, body) -> (status, content)`` in-process (httpx's
    MockTransport): method is how the request asks for structure, "none" for a plain one. Returns the model and
    the list of methods requested."""
    import httpx

    seen = []

    def handle(request):
        body = json.loads(request.content)
        method = ("tool_calling" if "tools" in body else
                  (body.get("response_format") or {}).get("type", "none"))
        seen.append(method)
        status, content = answer(method, body)
        if status != 200:
            return httpx.Response(status, json={"error": {"code": status, "message": content}})
        return httpx.Response(200, json={
            "id": "c1", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})

    chat = OpenAICompatibleChatModel(model="m", base_url="http://stub/v1", api_key=NO_KEY, max_retries=0,
                                     http_client=httpx.Client(transport=httpx.MockTransport(handle)), **kwargs)
    return chat, seen


PLAN_TEXT = json.dumps(_plan([1, 2, 3]))


def test_a_refused_request_shape_moves_to_the_next_method_and_the_plan_records_it():
    from hierplan.config import SamplingConfig
    from langgraph.runtime import Runtime

    from hierplan.nodes.planner import make_planner

    chat, seen = _stub_model(lambda method, body: (400, REFUSAL) if method == "json_schema" else (200, PLAN_TEXT),
                             structured="json_schema")
    planner = make_planner(chat, SamplingConfig(seed=1))
    out = planner({"task": "Add 2 and 3."}, Runtime())
    assert out["plan_source"] == "json_object" and out["plan_failures"] == []
    assert seen == ["json_schema", "json_object"]
    assert out["calls"][0]["prompt_tokens"] == 11 and len(out["calls"]) == 1
    # The refusal is remembered: the next plan starts at the method that worked.
    assert planner({"task": "Add 4 and 5."}, Runtime())["plan_source"] == "json_object"
    assert seen == ["json_schema", "json_object", "json_object"]


def test_when_every_shape_is_refused_the_plan_comes_from_the_text_path():
    from hierplan.config import SamplingConfig
    from langgraph.runtime import Runtime

    from hierplan.nodes.planner import make_planner

    chat, seen = _stub_model(lambda method, body: (422 if method == "tool_calling" else 400, REFUSAL)
                             if method != "none" else (200, PLAN_TEXT), structured="json_schema")
    out = make_planner(chat, SamplingConfig(seed=1))({"task": "Add 2 and 3."}, Runtime())
    assert out["plan_source"] == "model" and out["plan_failures"] == []
    assert seen == ["json_schema", "json_object", "tool_calling", "none"]
    # refusals are remembered per schema: the plan's is not asked again
    again = chat.with_structured_output(DraftPlan, include_raw=True).invoke("plan")
    assert again["raw"].content == PLAN_TEXT  # straight to the text path
    assert seen[4:] == ["none"]  # refused shapes are not asked again


@pytest.mark.parametrize("status", [401, 500, 404])
def test_other_failures_of_a_structured_request_raise_without_moving_on(status):
    chat, seen = _stub_model(lambda method, body: (status, "no"), structured="json_schema")
    with pytest.raises(RemoteModelError) as caught:
        chat.with_structured_output(DraftPlan, include_raw=True).invoke("plan")
    assert caught.value.status == status and seen == ["json_schema"]
    assert not chat.refused_shape("DraftPlan", "json_schema")
