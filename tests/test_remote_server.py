"""Remote models against a real OpenAI-compatible server: ``transformers serve`` on the embedded model, over HTTP
on 127.0.0.1 (tests/servers/launch.py). A whole run, streamed, with the server stopped mid-run and resumed.

transformers serve ignores ``response_format`` and tools, so here structured output is probed to "none" and plans
come from the text path; server-side constrained plans are proved against llama.cpp's server by
``make test-servers`` (tests/servers/test_llama_cpp_server.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from hierplan import SamplingConfig, build_graph, open_checkpointer
from hierplan.errors import RemoteModelError
from hierplan.models import load_chat_model
from hierplan.schema import DraftPlan
from needs import unavailable
from servers import launch

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

SECRET = "sk-test-remote-fedcba9876543210"
TASK = "A pen costs 3 dollars. How much do 7 pens cost?"
LONG_ASK = [HumanMessage("Write a long story about a cat who sails around the world.")]


@pytest.fixture(autouse=True)
def _openai_env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "HIERPLAN_STRUCTURED", "HIERPLAN_REMOTE_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture(scope="module")
def folder(model_cache_dir) -> Path:
    if reason := launch.transformers_serve_missing():
        unavailable(reason)
    return launch.embedded_model_folder(model_cache_dir)


@pytest.fixture(scope="module")
def server(folder, tmp_path_factory):
    running = launch.transformers_serve(folder, tmp_path_factory.mktemp("serve"))
    yield running
    running.stop()


def remote(server_or_url, model: str, **kwargs):
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    return load_chat_model(f"openai:{model}", base_url=url, **kwargs)


def test_calls_stream_and_report_the_servers_usage(server):
    chat = remote(server, server.model)
    # Every contract sampling kwarg is accepted: transformers serve answers 422 to a field it does not know, so
    # this also shows repetition_penalty is not sent to it.
    message = chat.bind(temperature=0, top_p=0.9, max_tokens=6, seed=1, repetition_penalty=1.05).invoke(LONG_ASK)
    usage = message.usage_metadata
    assert message.content and message.response_metadata["finish_reason"] == "length"
    assert usage["output_tokens"] == 6 and usage["input_tokens"] > 10
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]

    chunks = list(chat.stream(LONG_ASK, temperature=0, max_tokens=8))
    texts = [c.content for c in chunks if c.content]
    assert len(texts) >= 2  # the text arrives in pieces, as it is generated
    whole = sum(chunks[1:], chunks[0])
    assert whole.content == "".join(texts) and whole.usage_metadata["output_tokens"] == 8


def test_a_server_that_ignores_formats_is_probed_to_none(server):
    chat = remote(server, server.model)
    assert chat.structured_method() == "none"
    assert chat.metadata["hierplan_structured_probe"] == "none"
    with pytest.raises(NotImplementedError):
        chat.with_structured_output(DraftPlan, include_raw=True)
    # Forced anyway: the unconstrained reply does not parse, so parsed is None and the planner's text path runs.
    forced = remote(server, server.model, structured="json_object")
    out = forced.with_structured_output(DraftPlan, include_raw=True).invoke(LONG_ASK, max_tokens=8, temperature=0)
    assert out["parsed"] is None and isinstance(out["parsing_error"], ValueError)
    assert out["raw"].response_metadata["hierplan_structured"] == "json_object"
    assert out["raw"].usage_metadata["output_tokens"] == 8


def test_wrong_model_and_timeout_are_one_line_each(server):
    with pytest.raises(RemoteModelError) as caught:
        remote(server, "no-such-model").invoke("hi", max_tokens=2)
    assert caught.value.status == 400 and "no-such-model" in str(caught.value)
    with pytest.raises(RemoteModelError) as caught:  # a base URL without /v1: the server answers 404
        remote(f"http://127.0.0.1:{server.port}", server.model).invoke("hi", max_tokens=2)
    assert caught.value.status == 404 and "ends in /v1" in str(caught.value)
    with pytest.raises(RemoteModelError) as caught:
        remote(server, server.model, timeout=0.05).invoke(LONG_ASK, max_tokens=200)
    assert "did not answer within 0.05 s" in str(caught.value) and caught.value.status is None
    for error in (caught.value,):
        assert "\n" not in str(error) and SECRET not in str(error)


def _calls(values: dict) -> list[dict]:
    return list(values.get("calls") or []) + [c for r in values.get("results") or [] for c in r.get("calls") or []]


def test_a_whole_run_over_http_survives_the_server_stopping_mid_run(folder, tmp_path):
    port = launch.free_port()
    server = launch.transformers_serve(folder, tmp_path / "a", port)
    try:
        chat = remote(server, server.model, structured="none", max_new_tokens=24)
        graph = build_graph(chat, open_checkpointer(str(tmp_path / "runs.sqlite")), max_repairs=0,
                            sampling=SamplingConfig(seed=3).with_overrides(max_new_tokens=24))
        config = {"configurable": {"thread_id": "remote-1"}}
        with pytest.raises(RemoteModelError, match="connection refused"):
            for mode, chunk in graph.stream({"task": TASK}, config, stream_mode=["updates", "custom"]):
                if mode == "updates" and "planner" in chunk:
                    server.stop()  # the server goes away once the plan is made
        stopped = graph.get_state(config)
        assert stopped.values["plan"] and stopped.next and not stopped.values.get("final")
        planner_calls = [c for c in _calls(stopped.values) if c["node"] == "planner"]

        server = launch.transformers_serve(folder, tmp_path / "b", port)  # back, at the same address
        tokens = []
        for mode, chunk in graph.stream(None, config, stream_mode=["updates", "custom"]):
            if mode == "custom" and chunk.get("event") == "final_token":
                tokens.append(chunk["text"])
        done = graph.get_state(config).values
    finally:
        server.stop()
    assert done["final"] and len(tokens) >= 2 and "".join(tokens).strip() == done["final"]
    assert done["plan"] == stopped.values["plan"]  # resumed after the planner, not started over
    assert [c for c in _calls(done) if c["node"] == "planner"] == planner_calls
    calls = _calls(done)
    assert {c["node"] for c in calls} >= {"planner", "aggregator"}
    for call in calls:  # every count is the server's usage
        assert call["prompt_tokens"] > 10 and 0 < call["generated_tokens"] <= 24


def test_cli_run_fails_on_a_closed_port_then_resumes_when_the_server_is_up(folder, tmp_path, monkeypatch, capsys):
    from hierplan.cli.main import main
    from hierplan.store import RunStore

    port = launch.free_port()
    db = str(tmp_path / "runs.sqlite")
    monkeypatch.setenv("HIERPLAN_MODEL", f"openai:{folder}")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("HIERPLAN_STRUCTURED", "none")
    argv = ["--db", db, "--max-new-tokens", "16", "--seed", "1"]

    assert main(["run", TASK, "--run-id", "r1", *argv]) == 1
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("hierplan: error:")]
    assert len(lines) == 1 and "RemoteModelError" in lines[0] and "connection refused" in lines[0]
    assert "hierplan resume r1" in lines[0] and SECRET not in out + err
    record = RunStore.open(db).get("r1")
    assert record.status == "failed" and "connection refused" in record.error

    server = launch.transformers_serve(folder, tmp_path / "serve", port)
    try:
        assert main(["resume", "r1", *argv]) == 0
    finally:
        server.stop()
    out, err = capsys.readouterr()
    assert RunStore.open(db).get("r1").status == "done" and SECRET not in out + err
    for file in tmp_path.glob("runs.sqlite*"):  # not in run options, not in checkpoints (WAL included)
        assert SECRET.encode() not in file.read_bytes()
