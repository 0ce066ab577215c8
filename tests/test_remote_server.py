"""Remote models against a real OpenAI-compatible server: llama.cpp's (xllamacpp's prebuilt wheel) on the embedded
SmolLM2 GGUF, over HTTP on 127.0.0.1 (tests/llama_server.py). Plans constrained by the server's json_schema, a
schema it refuses moving on to the next method, a whole run with the server stopped mid-run and resumed, and its
errors as one line each. Without a GPU or a compiler; skipped (failed under HIERPLAN_REQUIRE_SERVERS=1) where
xllamacpp or the GGUF is missing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from langchain_core.messages import HumanMessage

from hierplan import SamplingConfig, build_graph, open_checkpointer
from hierplan.app.events import TokenEvents
from hierplan.errors import RemoteModelError
from hierplan.models import load_chat_model
from hierplan.rules.answer import FINAL_LINE_RE
from hierplan.models.remote import structured as remote_structured
from hierplan.schema import DraftPlan, Plan
from llama_server import llama_server, missing
from needs import unavailable
from servers import launch

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

SECRET = "sk-test-remote-fedcba9876543210"
TASK = "A pen costs 3 dollars. How much do 7 pens cost?"
# Two questions: the model plans it (a question asked once is planned by rule, without the server).
PLANNED_TASK = "A pen costs 3 dollars and a notebook 5. How much do 7 pens cost? How much do 2 notebooks cost?"
LONG_ASK = [HumanMessage("Write a long story about a cat who sails around the world.")]
# A constrained 3-step plan from the 135M took 190-210 tokens here; room for it, and short steps after.
PLAN_TOKENS = 400
STEP_TOKENS = 24


@pytest.fixture(autouse=True)
def _openai_env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "HIERPLAN_STRUCTURED", "HIERPLAN_REMOTE_TIMEOUT",
                 "HIERPLAN_REMOTE_REPETITION_PENALTY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture(scope="module")
def installed() -> None:
    if reason := missing():
        unavailable(reason)


@pytest.fixture(scope="module")
def server(installed, tmp_path_factory):
    running = llama_server(tmp_path_factory.mktemp("llama"))
    yield running
    running.stop()


def remote(server_or_url, **kwargs):
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    return load_chat_model("openai:smollm2", base_url=url, **kwargs)


def test_calls_stream_and_report_the_servers_usage(server, monkeypatch):
    monkeypatch.setenv("HIERPLAN_REMOTE_REPETITION_PENALTY", "repeat_penalty")
    chat = remote(server)
    message = chat.bind(temperature=0, top_p=0.9, max_tokens=6, seed=1, repetition_penalty=1.05).invoke(LONG_ASK)
    usage = message.usage_metadata
    # max_tokens, not max_completion_tokens, is what llama.cpp honours.
    assert message.content and message.response_metadata["finish_reason"] == "length"
    assert usage["output_tokens"] == 6 and usage["input_tokens"] > 10
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]

    chunks = list(chat.stream(LONG_ASK, temperature=0, max_tokens=8))
    texts = [c.content for c in chunks if c.content]
    assert len(texts) >= 2  # the text arrives in pieces, as it is generated
    whole = sum(chunks[1:], chunks[0])
    assert whole.content == "".join(texts) and whole.usage_metadata["output_tokens"] == 8


def test_the_plan_schema_is_accepted_in_every_response_format(server):
    """The schema that current llama.cpp answered 400 "schema must be an object" to is gone: both formats that
    carry it are applied (a short reply starts a JSON object, where SmolLM2 unconstrained answers in prose)."""
    chat = remote(server)
    assert chat.structured_method() == "json_schema"
    for method in ("json_schema", "json_object"):
        forced = remote(server, structured=method).with_structured_output(DraftPlan, include_raw=True)
        out = forced.invoke([HumanMessage(TASK)], temperature=0, max_tokens=16)
        raw = out["raw"]
        assert raw.response_metadata["hierplan_structured"] == method
        assert raw.content.lstrip().startswith("{"), raw.content


def test_a_schema_the_server_refuses_moves_on_to_the_next_method(server, monkeypatch):
    """The form the server refuses (a boolean ``items``, as hierplan sent before): its real 400s move the request
    on, json_schema then json_object, each once per model."""
    refused = {"type": "object", "required": ["steps"], "properties": {"steps": {
        "type": "array", "prefixItems": [{"type": "string"}], "items": False}}}
    monkeypatch.setattr(remote_structured, "server_schema", lambda schema, budget=None: refused)
    chat = remote(server)
    structured = chat.with_structured_output(DraftPlan, include_raw=True)
    out = structured.invoke([HumanMessage(TASK)], temperature=0, max_tokens=4)
    assert out["raw"].response_metadata["hierplan_structured"] == "tool_calling"
    assert chat.refused_shape("DraftPlan", "json_schema") and chat.refused_shape("DraftPlan", "json_object")
    assert out["parsed"] is None  # SmolLM2's chat template has no tools: the answer is prose, for the text path
    again = structured.invoke([HumanMessage(TASK)], temperature=0, max_tokens=4)
    assert again["raw"].response_metadata["hierplan_structured"] == "tool_calling"


def test_errors_are_one_line_each(server, tmp_path):
    with pytest.raises(RemoteModelError) as caught:
        remote(server, timeout=0.05).invoke(LONG_ASK, max_tokens=200)
    assert "did not answer within 0.05 s" in str(caught.value) and caught.value.status is None
    locked = llama_server(tmp_path, api_key="the-right-key")
    try:
        with pytest.raises(RemoteModelError) as refused:
            remote(locked).invoke("hi", max_tokens=2)
        assert refused.value.status == 401 and "OPENAI_API_KEY" in str(refused.value)
        assert remote(locked, api_key="the-right-key").invoke("hi", max_tokens=2).usage_metadata["output_tokens"]
    finally:
        locked.stop()
    for error in (caught.value, refused.value):
        assert "\n" not in str(error) and SECRET not in str(error)


def _calls(values: dict) -> list[dict]:
    return list(values.get("calls") or []) + [c for r in values.get("results") or [] for c in r.get("calls") or []]


def test_a_whole_run_plans_on_the_server_and_survives_it_stopping_mid_run(installed, tmp_path):
    port = launch.free_port()
    server = llama_server(tmp_path / "a", port=port)
    try:
        chat = remote(server, max_new_tokens=STEP_TOKENS)
        sampling = SamplingConfig(seed=3).with_overrides(max_new_tokens=STEP_TOKENS)
        sampling = replace(sampling, planner=replace(sampling.planner, max_new_tokens=PLAN_TOKENS))
        # No replan: a failed step of the 135M would revise the plan, and this test checks that resume keeps it.
        # explain: the answer is the aggregator's, streamed token by token, even when a vote decided a number
        graph = build_graph(chat, open_checkpointer(str(tmp_path / "runs.sqlite")), max_repairs=0, max_replans=0,
                            sampling=sampling, explain=True)
        config = {"configurable": {"thread_id": "remote-1"}}
        with pytest.raises(RemoteModelError, match="connection refused"):
            for mode, chunk in graph.stream({"task": PLANNED_TASK}, config, stream_mode=["updates", "custom"]):
                if mode == "updates" and "planner" in chunk:
                    server.stop()  # the server goes away once the plan is made
        stopped = graph.get_state(config)
        assert stopped.values["plan_source"] == "json_schema", stopped.values.get("plan_failures")
        Plan.model_validate(stopped.values["plan"])
        assert stopped.next and not stopped.values.get("final")
        planner_calls = [c for c in _calls(stopped.values) if c["node"] == "planner"]
        assert len(planner_calls) == 1  # valid on the first pass

        server = llama_server(tmp_path / "b", port=port)  # back, at the same address
        tokens, events = [], TokenEvents()
        for mode, chunk in graph.stream(None, config, stream_mode=["updates", "messages"]):
            if mode == "messages" and (event := events.event(*chunk)) and event["node"] == "aggregator":
                tokens.append(event["text"])
        done = graph.get_state(config).values
    finally:
        server.stop()
    assert done["final"] and len(tokens) >= 2
    # What streamed is the answer, but for a "Final answer:" line the aggregator may end on the computed value.
    prose = [line for line in "".join(tokens).strip().splitlines() if not FINAL_LINE_RE.match(line)]
    assert [line for line in done["final"].splitlines() if not FINAL_LINE_RE.match(line)] == prose
    assert done["plan"] == stopped.values["plan"]  # resumed after the planner, not started over
    assert [c for c in _calls(done) if c["node"] == "planner"] == planner_calls
    calls = _calls(done)
    assert {c["node"] for c in calls} >= {"planner", "aggregator"}
    for call in calls:  # every count is the server's usage
        assert call["prompt_tokens"] > 10 and 0 < call["generated_tokens"] <= PLAN_TOKENS


def test_cli_run_fails_on_a_closed_port_then_resumes_when_the_server_is_up(installed, tmp_path, monkeypatch,
                                                                         capsys):
    from hierplan.cli.main import main
    from hierplan.store import RunStore

    port = launch.free_port()
    db = str(tmp_path / "runs.sqlite")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("HIERPLAN_STRUCTURED", "none")  # the text path: short calls (plans: the test above)
    argv = ["--model", "openai:smollm2", "--db", db, "--max-new-tokens", "16", "--seed", "1"]

    assert main(["run", TASK, "--run-id", "r1", *argv]) == 1
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("hierplan: error:")]
    assert len(lines) == 1 and "RemoteModelError" in lines[0] and "connection refused" in lines[0]
    assert "hierplan resume r1" in lines[0] and SECRET not in out + err
    record = RunStore.open(db).get("r1")
    assert record.status == "failed" and "connection refused" in record.error

    server = llama_server(tmp_path / "serve", port=port)
    try:
        assert main(["resume", "r1", *argv]) == 0
    finally:
        server.stop()
    out, err = capsys.readouterr()
    assert RunStore.open(db).get("r1").status == "done" and SECRET not in out + err
    for file in tmp_path.glob("runs.sqlite*"):  # not in run options, not in checkpoints (WAL included)
        assert SECRET.encode() not in file.read_bytes()


def test_the_model_doorway_streams_a_batch_labelled_by_step(server):
    from helpers import doorway_streams

    tokens = doorway_streams(remote(server))
    assert sum(1 for e in tokens if e["step_id"] == 1) > 2  # token by token, as the server sends them
