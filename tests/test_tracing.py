"""Tracing (hierplan/tracing.py): OpenTelemetry spans for the run, every node, every model call and every tool or
sandbox call, received on a local OTLP/HTTP receiver; LangSmith's runs on a local stand-in of its endpoint. All
offline: the receivers are http.servers in this process (tests/otlp_receiver.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from fakes import FakeExecution, ScriptedChatModel, plan_json, scripted_runner
from hierplan import build_graph, tracing
from hierplan.errors import UsageError
from otlp_receiver import LangSmithStandIn, OtlpReceiver

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
TASK = "Solve it in steps, then explain"  # names parts: the planner plans it with split_writing (rules.plan)
OTEL_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER",
             "OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_PROTOCOL",
             "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
LANGSMITH_VARS = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING",
                  "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY",
                  "LANGSMITH_PROJECT", "LANGCHAIN_PROJECT")


class CountingChatModel(ScriptedChatModel):
    """A ScriptedChatModel that reports token counts (words in, words out) and a finish reason, as real ones do."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        text = super()._generate(messages, stop, run_manager, **kwargs).generations[0].message.content
        words_in = sum(len(str(m.content).split()) for m in messages)
        message = AIMessage(text, response_metadata={"finish_reason": "stop"},
                            usage_metadata={"input_tokens": words_in, "output_tokens": len(text.split()),
                                            "total_tokens": words_in + len(text.split())})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture
def receiver():
    server = OtlpReceiver()
    yield server
    server.close()


@pytest.fixture
def clean_env(monkeypatch):
    for name in OTEL_VARS + LANGSMITH_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def provider(receiver, clean_env):
    """A tracer provider made from the standard variables, pointed at the local receiver (not the process's global
    one, which a test cannot take back)."""
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    clean_env.setenv("OTEL_SERVICE_NAME", "hierplan-test")
    made = tracing.provider_from_env()
    yield made
    made.shutdown()


def traced_run(provider, receiver, *, plan=("python", "llm"), runner=None, tools=(), model=None, seed=7, **options):
    model = model or CountingChatModel(script={"planner": [plan_json(list(plan))]},
                                       default={"python_step": "print(6 * 7)"})
    runner = runner or scripted_runner([FakeExecution(True, "42\n") for _ in range(10)])
    graph = build_graph(model, run_code=runner, tools=tools, constrain=False, seed=seed, tracing=provider,
                        split_writing=True, **options)
    out = graph.invoke({"task": TASK}, {"configurable": {"thread_id": "run-1"}})
    assert provider.force_flush(10_000)
    return out, receiver.spans


def by_name(spans, name):
    return [s for s in spans if s.name == name]


def test_spans_for_the_run_every_node_and_every_model_call_reach_the_otlp_receiver(provider, receiver):
    out, spans = traced_run(provider, receiver)
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    (root,) = by_name(spans, "invoke_agent hierplan")
    assert root.parent_id is None and root.attributes["hierplan.run_id"] == "run-1"
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.resource["service.name"] == "hierplan-test"
    assert {s.trace_id for s in spans} == {root.trace_id}

    # every node that ran is a span under the run, in the order it ran
    nodes = sorted((s for s in spans if "langgraph.step" in s.attributes), key=lambda s: s.start_ns)
    assert all(s.parent_id == root.span_id for s in nodes)
    assert [s.name for s in nodes if s.name != "scheduler"] == [
        "memory", "classify", "read_requirements", "planner", "tool_choice", "python_step", "llm_step", "aggregator",
        "check_instructions"]
    assert all(s.attributes["hierplan.node"] == s.name for s in nodes)

    # every model call is a span under its node, with what its record says: node, tokens; and its seed
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    node_of = {s.span_id: s.name for s in nodes}
    assert all(node_of[s.parent_id] == s.attributes["hierplan.node"] for s in chats)
    records = list(out.get("calls") or []) + [c for r in out["results"] for c in r.get("calls") or []]
    assert Counter((c["node"], c["prompt_tokens"], c["generated_tokens"]) for c in records) == Counter(
        (s.attributes["hierplan.node"], s.attributes["gen_ai.usage.input_tokens"],
         s.attributes["gen_ai.usage.output_tokens"]) for s in chats)
    for s in chats:
        assert s.name == "chat scripted-fake" and s.attributes["gen_ai.request.model"] == "scripted-fake"
        assert isinstance(s.attributes["gen_ai.request.seed"], int) and s.attributes["hierplan.seed"] == 7
        assert s.attributes["gen_ai.response.finish_reasons"] == ["stop"]
        assert {"gen_ai.request.temperature", "gen_ai.request.max_tokens"} <= s.attributes.keys()
        assert s.kind == 3  # CLIENT
    # each call draws a seed of its own, derived from the run's (hierplan.nodes.model_call.call_seed)
    assert len({s.attributes["gen_ai.request.seed"] for s in chats}) == len(chats)

    # the Python step's program ran in the sandbox: a tool span under the step
    (sandbox,) = by_name(spans, "execute_tool sandbox")
    assert node_of[sandbox.parent_id] == "python_step"
    assert sandbox.attributes["hierplan.ok"] is True and sandbox.attributes["hierplan.exit_reason"] == "ok"
    assert sandbox.status == 0
    # a prompt or a reply never goes into a span
    assert not any("print(6 * 7)" in str(v) or TASK in str(v) for s in spans for v in s.attributes.values())


def test_a_failed_sandbox_run_and_a_failing_node_are_errors(provider, receiver):
    runner = scripted_runner([FakeExecution(False, error="ZeroDivisionError: division by zero",
                                            exit_reason="error")] * 10)
    model = CountingChatModel(script={"planner": [plan_json(["python"])], "aggregator": [RuntimeError("down")]},
                              default={"python_step": "print(1 / 0)"})
    with pytest.raises(RuntimeError, match="down"):
        traced_run(provider, receiver, model=model, runner=runner, max_replans=0)
    provider.force_flush(10_000)
    spans = receiver.spans
    sandboxes = by_name(spans, "execute_tool sandbox")
    assert sandboxes and all(s.status == 2 and s.attributes["error.type"] == "error" for s in sandboxes)
    assert all(s.attributes["hierplan.ok"] is False for s in sandboxes)
    (aggregator,) = by_name(spans, "aggregator")
    (root,) = by_name(spans, "invoke_agent hierplan")
    assert aggregator.status == 2 and aggregator.attributes["error.type"] == "RuntimeError"
    assert root.status == 2


def test_a_registered_tool_call_is_a_tool_span_under_its_step(provider, receiver):
    @tool
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    model = CountingChatModel(script={"planner": [plan_json(["add"])], "tool_step": ['{"a": 2, "b": 3}']})
    out, spans = traced_run(provider, receiver, model=model, tools=[add])
    assert out["results"][0]["output"] == "5"
    (call,) = by_name(spans, "execute_tool add")
    (step,) = by_name(spans, "tool_step")
    assert call.parent_id == step.span_id
    assert call.attributes["gen_ai.tool.name"] == "add" and call.attributes["hierplan.ok"] is True


def test_a_span_of_the_callers_around_the_run_is_its_parent(provider, receiver):
    model = CountingChatModel(script={"planner": [plan_json(["llm"])]})
    graph = build_graph(model, constrain=False, tracing=provider, split_writing=True)
    with provider.get_tracer("app").start_as_current_span("app request"):
        graph.invoke({"task": TASK}, {"configurable": {"thread_id": "nested"}})
    provider.force_flush(10_000)
    (app,) = by_name(receiver.spans, "app request")
    (root,) = by_name(receiver.spans, "invoke_agent hierplan")
    assert root.parent_id == app.span_id and root.trace_id == app.trace_id


def test_an_approval_stop_is_no_error(provider, receiver):
    model = CountingChatModel(script={"planner": [plan_json(["llm", "llm"])]})
    graph = build_graph(model, constrain=False, approve=True, tracing=provider, split_writing=True)
    graph.invoke({"task": TASK}, {"configurable": {"thread_id": "waits"}})
    provider.force_flush(10_000)
    (approval,) = by_name(receiver.spans, "approval")
    assert approval.status != 2 and approval.attributes["hierplan.interrupted"] is True


def test_tracing_is_off_unless_a_variable_or_the_caller_asks(clean_env):
    assert tracing.requested() is None and tracing.callbacks() == []
    clean_env.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")
    assert tracing.requested() == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    assert tracing.callbacks(False) == []
    clean_env.setenv("OTEL_TRACES_EXPORTER", "none")
    assert tracing.requested() is None
    clean_env.setenv("OTEL_TRACES_EXPORTER", "console")
    assert tracing.requested() == "OTEL_TRACES_EXPORTER"
    clean_env.setenv("OTEL_SDK_DISABLED", "true")
    assert tracing.requested() is None
    with pytest.raises(TypeError, match="TracerProvider"):
        tracing.callbacks("yes")


@pytest.mark.parametrize("env, message", [
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "over HTTP"),
    ({"OTEL_TRACES_EXPORTER": "zipkin"}, "otlp"),
])
def test_what_hierplan_cannot_export_is_one_line(clean_env, env, message):
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    for name, value in env.items():
        clean_env.setenv(name, value)
    with pytest.raises(UsageError, match=message) as caught:
        tracing.provider_from_env()
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("missing", ["opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter"])
def test_without_opentelemetry_installed_asking_for_tracing_is_one_line_before_any_run(clean_env, models, tmp_path,
                                                                                        capsys, missing):
    from hierplan.cli.main import main

    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    clean_env.setitem(sys.modules, missing, None)  # an import of it fails, as where it is not installed
    assert main(["run", "--db", str(tmp_path / "r.sqlite"), TASK]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hierplan: error: OTEL_EXPORTER_OTLP_ENDPOINT asks for traces") and "\n" not in err
    assert err.endswith("pip install 'hierplan[otel]'")
    assert main(["runs", "--db", str(tmp_path / "r.sqlite")]) == 0
    assert "Solve it" not in capsys.readouterr().out  # no run was recorded
    assert tracing._provider is None


def cli_run(tmp_path, env, plan=("python", "llm")):
    """``hierplan run`` in a subprocess over the scripted model of tests/cli_worker.py (the real sandbox)."""
    full = {k: v for k, v in os.environ.items() if k not in OTEL_VARS + LANGSMITH_VARS}
    full.update({"PYTHONPATH": os.pathsep.join([str(REPO), str(TESTS)]), "HIERPLAN_STATE_DIR": str(tmp_path / "s"),
                 "HIERPLAN_WORKER_SPEC": json.dumps({"plan": list(plan), "code": "print(6 * 7)"}), **env})
    proc = subprocess.run([sys.executable, str(TESTS / "cli_worker.py"), "run", "--split-writing", "--db",
                           str(tmp_path / "r.sqlite"), "--run-id", "cli-1", TASK], capture_output=True, text=True,
                          env=full, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_the_cli_exports_by_the_standard_variables_and_sends_everything_before_it_exits(tmp_path, receiver):
    cli_run(tmp_path, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
    spans = receiver.spans  # the command has ended: whatever it sent has arrived
    (root,) = by_name(spans, "invoke_agent hierplan")
    assert root.attributes["hierplan.run_id"] == "cli-1" and root.resource["service.name"] == "hierplan"
    assert {"classify", "planner", "python_step", "llm_step", "aggregator", "execute_tool sandbox"} <= {
        s.name for s in spans}
    (sandbox,) = by_name(spans, "execute_tool sandbox")
    assert sandbox.attributes["hierplan.ok"] is True and sandbox.attributes["hierplan.sandbox.level"]
    assert Counter(s.attributes["hierplan.node"] for s in spans if s.name.startswith("chat ")) == {
        "read_requirements": 1, "planner": 1, "python_step": 1, "llm_step": 1, "aggregator": 1}


def test_without_the_variables_nothing_is_exported_and_no_exporter_loaded(tmp_path, receiver):
    code = ("import sys, json\nsys.argv = ['hierplan'] + json.loads(sys.argv[1])\n"
            "import cli_worker\nrc = cli_worker.main()\n"
            "from opentelemetry import trace\n"
            "print(json.dumps({'rc': rc, 'exporter': any(m.startswith('opentelemetry.exporter') for m in sys.modules),"
            " 'provider': type(trace.get_tracer_provider()).__name__}))\n")
    full = {k: v for k, v in os.environ.items() if k not in OTEL_VARS + LANGSMITH_VARS}
    full.update({"PYTHONPATH": os.pathsep.join([str(REPO), str(TESTS)]), "HIERPLAN_STATE_DIR": str(tmp_path / "s"),
                 "HIERPLAN_WORKER_SPEC": json.dumps({"plan": ["python", "llm"]})})
    argv = ["run", "--split-writing", "--db", str(tmp_path / "r.sqlite"), TASK]
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True, env=full,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"rc": 0, "exporter": False, "provider": "ProxyTracerProvider"}
    assert receiver.paths == []


def test_help_imports_no_opentelemetry():
    code = ("import sys\nfrom hierplan.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def run_names(runs):
    return {run.get("name") for _, run in runs}


def test_langsmith_gets_every_run_by_its_standard_variables(tmp_path):
    standin = LangSmithStandIn()
    try:
        cli_run(tmp_path, {"LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": standin.url,
                           "LANGSMITH_API_KEY": "test-key", "LANGSMITH_PROJECT": "hierplan-tests"})
        runs = standin.runs  # the command flushed LangSmith's queue before it ended
    finally:
        standin.close()
    assert {"hierplan", "classify", "planner", "python_step", "sandbox", "llm_step", "aggregator"} <= run_names(runs)
    assert {run["run_type"] for kind, run in runs if kind == "post"} >= {"chain", "llm", "tool"}
    # the run's end arrived too: the root run is posted or patched with an end time
    assert any(run.get("name") == "hierplan" and run.get("end_time") for _, run in runs) or any(
        kind == "patch" and run.get("end_time") and not run.get("parent_run_id") for kind, run in runs)
    assert all(run.get("session_name") in (None, "hierplan-tests") for kind, run in runs if kind == "post")


def test_serve_leaves_langsmith_to_its_variables():
    from hierplan.server.launch import ServeSpec, environment

    spec = ServeSpec(workdir=Path("."))
    assert environment(spec, {})["LANGSMITH_TRACING"] == "false"  # not traced unless asked, even with a key
    assert environment(spec, {"LANGSMITH_TRACING": "true"})["LANGSMITH_TRACING"] == "true"
    assert "LANGSMITH_TRACING" not in environment(spec, {"LANGCHAIN_TRACING_V2": "true"})


@pytest.mark.slow
def test_the_server_traces_to_otlp_and_langsmith(tmp_path, receiver):
    from needs import unavailable
    from server_fixtures import missing, start_server

    if reason := missing():
        unavailable(reason)
    standin = LangSmithStandIn()
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "200",
           "LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": standin.url, "LANGSMITH_API_KEY": "test-key"}
    server = start_server(tmp_path / "server", env=env)
    try:
        import asyncio

        from langgraph_sdk import get_client

        async def go():
            client = get_client(url=server.url)
            thread = await client.threads.create()
            await client.runs.wait(thread["thread_id"], "hierplan", input={"task": TASK},
                                   config={"configurable": {"split_writing": True}})
            return thread["thread_id"]

        thread_id = asyncio.run(go())
        spans = receiver.wait_for(lambda got: any(s.name == "invoke_agent hierplan" for s in got))
        runs = standin.wait_for(lambda got: "aggregator" in run_names(got))
    finally:
        server.stop()
        standin.close()
    roots = [s for s in spans if s.name == "invoke_agent hierplan"]
    assert roots and roots[0].attributes["hierplan.run_id"] == thread_id, server.log_tail()
    assert {"planner", "python_step", "execute_tool sandbox", "aggregator"} <= {s.name for s in spans}
    assert {"planner", "python_step", "aggregator"} <= run_names(runs)
