"""Registered tools as plan steps (build_graph's ``tools``): the plan's schema and prompts, the tool rule, the
scheduler's third branch, the tool_step node (arguments, time limit, failures), approval, resume and output."""

from __future__ import annotations

import asyncio
import io
import json
import re
import threading

import pytest
from langchain_core.tools import StructuredTool, tool
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import ValidationError

from fakes import FakeExecution, ScriptedChatModel, StructuredScriptedChatModel, plan_json, scripted_runner
from hierplan import build_graph, open_checkpointer
from hierplan.graph.builder import make_dispatch
from hierplan.models.hf.json_grammar import schema_regex
from hierplan.models.remote.structured import server_schema
from hierplan.nodes import prompts
from hierplan.nodes.planner import parse_plan
from hierplan.options import RunOptions
from hierplan.schema import DraftPlan, DraftRevision, Plan, Revision, plan_models

CONFIG = {"configurable": {"thread_id": "tools-1"}}
WEATHER_DESCRIPTION = "The weather forecast for a city."


def weather_tool(calls: list | None = None):
    @tool
    def get_weather(city: str, days: int = 1) -> str:
        """The weather forecast for a city."""
        if calls is not None:
            calls.append({"city": city, "days": days})
        return f"sunny in {city} for {days} day(s)"

    return get_weather


def run(tools, plan_tools, *, script=None, model_cls=ScriptedChatModel, task="What is the weather in Paris?",
        **options):
    model = model_cls(script={"planner": [plan_json(plan_tools)], **(script or {})})
    runner = scripted_runner([FakeExecution(True, "42\n") for _ in range(10)])  # no sandbox: not the point here
    graph = build_graph(model, tools=tools, run_code=runner, **{"constrain": False, **options})
    return model, graph, graph.invoke({"task": task}, CONFIG)


# --- the plan's schema --------------------------------------------------------------------------------------

def test_without_tools_the_plan_models_and_their_json_schema_are_todays():
    models = plan_models(())
    assert (models.plan, models.draft, models.revision, models.draft_revision) == (
        Plan, DraftPlan, Revision, DraftRevision)
    step = DraftPlan.model_json_schema()["$defs"]["DraftStep"]["properties"]["tool"]
    assert step["enum"] == ["none", "llm", "python"]


def test_registered_names_extend_only_the_tool_enum_of_every_plan_schema():
    models = plan_models(("get_weather", "lookup"))
    for default, extended in ((Plan, models.plan), (DraftPlan, models.draft), (Revision, models.revision),
                              (DraftRevision, models.draft_revision)):
        schema, expected = extended.model_json_schema(), default.model_json_schema()
        (step_name,) = schema["$defs"]
        tool = schema["$defs"][step_name]["properties"]["tool"]
        assert tool["enum"] == ["none", "llm", "python", "get_weather", "lookup"]
        tool["enum"] = ["none", "llm", "python"]
        assert schema == expected


def test_the_grammar_and_the_server_schema_list_the_registered_names():
    draft = plan_models(("get_weather",)).draft
    grammar = re.compile(schema_regex(draft))
    plan = json.loads(plan_json(["get_weather", "llm", "llm"]))
    plan["assumptions"] = []
    for step in plan["steps"]:
        step["depends_on"] = None
    text = json.dumps(plan, separators=(",", ":"))
    assert grammar.fullmatch(text)
    assert not grammar.fullmatch(text.replace('"get_weather"', '"get_water"'))
    assert not re.fullmatch(schema_regex(DraftPlan), text)  # the default grammar still refuses it
    sent = json.dumps(server_schema(draft))
    assert '"get_weather"' in sent and '"get_weather"' not in json.dumps(server_schema(DraftPlan))


def test_a_plan_naming_an_unknown_tool_is_invalid():
    text = plan_json(["get_weather", "llm", "llm"])
    with pytest.raises(ValidationError):
        parse_plan(text)
    with pytest.raises(ValidationError):
        parse_plan(plan_json(["get_water", "llm", "llm"]), plan_models(("get_weather",)).plan, ("get_weather",))
    # case and spaces are forgiven, as for the built-in tools
    plan = parse_plan(plan_json([" Get_Weather", "LLM", "llm"]), plan_models(("get_weather",)).plan, ("get_weather",))
    assert [s.tool for s in plan.steps] == ["get_weather", "llm", "llm"]


def test_build_graph_takes_only_langchain_tools_with_distinct_names_of_their_own():
    with pytest.raises(TypeError, match="LangChain tools"):
        build_graph(None, tools=[lambda city: city])

    @tool
    def python(code: str) -> str:
        """Runs code."""
        return code

    with pytest.raises(ValueError, match="may not be named 'python'"):
        build_graph(None, tools=[python])
    with pytest.raises(ValueError, match="two tools are named 'get_weather'"):
        build_graph(None, tools=[weather_tool(), weather_tool()])


# --- planning and the tool rule -----------------------------------------------------------------------------

def test_the_planner_is_shown_each_tools_name_and_description_only_when_tools_are_registered():
    model, _, _ = run([weather_tool()], ["get_weather", "llm", "llm"], script={"tool_step": ['{"city": "Paris"}']})
    # a writing task: its requirements are read first (nodes.read_requirements), then the planner plans it
    assert [c["node"] for c in model.calls][:2] == ["read_requirements", "planner"]
    user = model.calls[1]["messages"][-1].content
    assert user.startswith(prompts.PLANNER_USER.format(task="What is the weather in Paris?"))
    assert f"- get_weather: {WEATHER_DESCRIPTION}" in user
    assert model.calls[1]["messages"][0].content == prompts.PLANNER_SYSTEM

    # without tools the task must name parts ("steps"), and the run have split_writing, to be planned by the
    # planner (else rules.plan's rule)
    task = "What is the weather in Paris? Give the steps to find out."
    plain, _, _ = run([], ["llm", "llm", "llm"], task=task, split_writing=True)
    assert [c["node"] for c in plain.calls][:2] == ["read_requirements", "planner"]
    assert plain.calls[1]["messages"][-1].content == prompts.PLANNER_USER.format(task=task)


def test_a_step_naming_a_registered_tool_keeps_it_and_the_rule_decides_the_others():
    _, _, out = run([weather_tool()], ["get_weather", "none", "python"], script={"tool_step": ['{"city": "Paris"}']})
    steps = out["plan"]["steps"]
    assert steps[0]["tool"] == "get_weather" and "registered tool get_weather" in steps[0]["tool_reason"]
    # a writing task: the model's "none" is an LLM step; "Compute part 3" asks for a computation: Python
    assert [s["tool"] for s in steps[1:]] == ["llm", "python"]


def test_the_constrained_planner_and_the_arguments_use_the_schemas_with_the_tools():
    model, _, out = run([weather_tool()], ["get_weather", "llm", "llm"], model_cls=StructuredScriptedChatModel,
                        script={"tool_step": ['{"city": "Paris", "days": 2}']}, constrain=True)
    requirements, planner, tool_call = model.calls[:3]
    assert requirements["node"] == "read_requirements" and planner["node"] == "planner"
    enum = planner["kwargs"]["response_format"].model_json_schema()["$defs"]["DraftStep"]["properties"]["tool"]
    assert "get_weather" in enum["enum"]
    assert tool_call["node"] == "tool_step"
    assert tool_call["kwargs"]["response_format"].model_json_schema()["required"] == ["city"]
    assert out["plan_source"] == "constrained" and out["results"][0]["tool_args"] == {"city": "Paris", "days": 2}


# --- the tool step ------------------------------------------------------------------------------------------

def test_a_tool_step_records_its_arguments_and_result_and_later_steps_see_the_result():
    calls = []
    model, _, out = run([weather_tool(calls)], ["get_weather", "llm", "llm"],
                        script={"tool_step": ['Sure: {"city": "Paris", "days": 2}']})
    assert calls == [{"city": "Paris", "days": 2}]
    first = out["results"][0]
    assert first["ok"] and first["tool"] == "get_weather"
    assert first["tool_args"] == {"city": "Paris", "days": 2}
    assert first["tool_result"] == first["output"] == "sunny in Paris for 2 day(s)"
    assert [c["node"] for c in first["calls"]] == ["tool_step"]
    assert [c["node"] for c in model.calls][:3] == ["read_requirements", "planner", "tool_step"]
    asked = model.calls[2]["messages"]
    assert asked[0].content.startswith(prompts.TOOL_SYSTEM.split("{")[0]) and '"city"' in asked[0].content
    assert "Task: What is the weather in Paris?" in asked[1].content
    later = [c for c in model.calls if c["node"] == "llm_step"][0]["messages"][-1].content
    assert "sunny in Paris for 2 day(s)" in later
    aggregator = [c for c in model.calls if c["node"] == "aggregator"][0]["messages"][-1].content
    assert "sunny in Paris for 2 day(s)" in aggregator


def test_a_tool_without_arguments_is_called_without_asking_the_model():
    @tool
    def today() -> str:
        """Today's date."""
        return "2031-04-05"

    model, _, out = run([today], ["today", "llm", "llm"], task="What day is it?")
    assert out["results"][0]["output"] == "2031-04-05" and out["results"][0]["tool_args"] == {}
    assert model.count("tool_step") == 0


def test_a_tool_that_raises_is_a_failed_step_the_replanner_handles():
    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        raise ConnectionError("the archive is offline")

    model, _, out = run([lookup], ["lookup", "llm", "llm"], task="Find out about Atlantis",
                        script={"tool_step": ['{"topic": "atlantis"}']})
    failed = out["results"][0]
    assert not failed["ok"] and failed["error"] == "ConnectionError: the archive is offline"
    assert failed["tool_args"] == {"topic": "atlantis"} and failed["tool_result"] is None
    assert model.count("replanner") == 1
    assert out["replans"][0]["failed_step"] == 1 and "archive is offline" in out["replans"][0]["error"]


def test_arguments_that_do_not_validate_fail_the_step_without_calling_the_tool():
    calls = []
    _, _, out = run([weather_tool(calls)], ["get_weather", "llm", "llm"],
                    script={"tool_step": ['{"days": "many"}']}, max_replans=0)
    failed = out["results"][0]
    assert not failed["ok"] and "no valid arguments for get_weather" in failed["error"] and "city" in failed["error"]
    assert failed["tool_args"] is None and calls == []


def test_an_async_only_tool_runs_and_one_past_the_time_limit_fails_the_step(monkeypatch):
    import hierplan.nodes.tool_step as tool_step

    async def fetch(url: str) -> str:
        await asyncio.sleep(0.01)
        return f"page at {url}"

    async def hang(url: str) -> str:
        await asyncio.sleep(30)
        return "never"

    fetcher = StructuredTool.from_function(coroutine=fetch, name="fetch", description="Fetch a page.")
    hanger = StructuredTool.from_function(coroutine=hang, name="hang", description="Hangs.")
    _, _, out = run([fetcher], ["fetch", "llm", "llm"], script={"tool_step": ['{"url": "http://x"}']})
    assert out["results"][0]["output"] == "page at http://x"

    monkeypatch.setattr(tool_step, "TOOL_TIMEOUT_S", 0.3)
    _, _, out = run([hanger], ["hang", "llm", "llm"], script={"tool_step": ['{"url": "http://x"}']}, max_replans=0)
    failed = out["results"][0]
    assert not failed["ok"] and failed["error"] == "the tool hang did not finish within 0.3 s"
    assert failed["seconds"] < 5


def test_a_tool_bound_to_an_event_loop_runs_on_it_and_is_cancelled_there_at_its_limit():
    """An MCP tool's session lives on an event loop (hierplan.tools.mcp): call_tool hands the call to that loop
    (``session_loop``), with no thread or loop of its own, and cancels it there at the limit; the loop runs on."""
    from hierplan.tools.registered import call_tool

    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    ran_on, cancelled = [], []

    async def wait(seconds: float) -> str:
        ran_on.append(threading.current_thread())
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            cancelled.append(seconds)
            raise
        return f"waited {seconds} s"

    class LoopBound(StructuredTool):
        @property
        def session_loop(self):
            return loop

    bound = LoopBound.from_function(coroutine=wait, name="wait", description="Wait a while.")
    try:
        got = call_tool(bound, {"seconds": 0}, 5)
        assert got.ok and got.text == "waited 0.0 s" and ran_on == [runner]
        late = call_tool(bound, {"seconds": 30}, 0.2)
        assert not late.ok and late.error == "the tool wait did not finish within 0.2 s" and late.seconds < 5
        assert cancelled == [30.0]
        assert call_tool(bound, {"seconds": 0.01}, 5).ok and ran_on == [runner] * 3
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(5)
        loop.close()


def test_a_number_computed_from_a_tools_result_is_not_voted_on_by_programs_that_never_saw_it():
    rates = []

    @tool
    def exchange_rate(currency: str) -> float:
        """Today's value of one euro in a currency."""
        rates.append(currency)
        return 1.09

    model, _, out = run([exchange_rate], ["exchange_rate", "python", "llm"],
                        script={"tool_step": ['{"currency": "USD"}'], "python_step": ["print(250 * 1.09)"]},
                        task="How many US dollars is 250 euros today?")
    assert out["kind"] == "numeric" and rates == ["USD"]
    assert out["results"][1]["tool"] == "python" and out["results"][1]["ok"]
    assert model.count("python_check") == 0 and "vote" not in out


def test_dispatch_sends_a_registered_tools_step_to_tool_step_and_refuses_an_unknown_one():
    dispatch = make_dispatch(["get_weather"])
    runtime = Runtime(context=RunOptions())
    plan = {"steps": [{"id": 1, "tool": "get_weather", "depends_on": []}, {"id": 2, "tool": "python", "depends_on": []},
                      {"id": 3, "tool": "llm", "depends_on": []}]}
    sends = dispatch({"task": "t", "kind": "writing", "plan": plan, "results": []}, runtime)
    assert [s.node for s in sends] == ["tool_step", "python_step", "llm_step"]
    assert sends[0].arg["step"]["id"] == 1
    plan["steps"][0]["tool"] = "get_water"
    with pytest.raises(ValueError, match="unknown tool 'get_water' in step 1"):
        dispatch({"task": "t", "kind": "writing", "plan": plan, "results": []}, runtime)


# --- approval, resume, output -------------------------------------------------------------------------------

def test_approval_shows_the_tools_and_an_edit_may_name_a_registered_tool_but_no_other():
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "llm", "llm"])],
                                      "tool_step": ['{"city": "Oslo"}']})
    graph = build_graph(model, tools=[weather_tool()], constrain=False, approve=True)
    graph.invoke({"task": "Weather in Oslo?"}, CONFIG)
    request = graph.get_state(CONFIG).interrupts[0].value
    assert request["tools"] == {"get_weather": WEATHER_DESCRIPTION}
    edited = json.loads(plan_json(["get_water", "llm", "llm"]))
    graph.invoke(Command(resume={"action": "edit", "plan": edited}), CONFIG)
    assert "invalid" in graph.get_state(CONFIG).interrupts[0].value["error"]
    edited["steps"][0]["tool"] = "get_weather"
    out = graph.invoke(Command(resume={"action": "edit", "plan": edited}), CONFIG)
    assert out["results"][0]["tool"] == "get_weather" and out["results"][0]["output"] == "sunny in Oslo for 1 day(s)"


def test_a_finished_tool_call_is_not_repeated_on_resume(tmp_path):
    calls = []
    model = ScriptedChatModel(script={"planner": [plan_json(["get_weather", "llm", "llm"])],
                                      "tool_step": ['{"city": "Rome"}'],
                                      "aggregator": [RuntimeError("model crashed"), "It is sunny in Rome."]})
    saver = open_checkpointer(str(tmp_path / "runs.sqlite"))
    graph = build_graph(model, saver, tools=[weather_tool(calls)], constrain=False)
    with pytest.raises(RuntimeError, match="model crashed"):
        graph.invoke({"task": "Weather in Rome?"}, CONFIG)
    assert calls == [{"city": "Rome", "days": 1}]

    again = build_graph(model, open_checkpointer(str(tmp_path / "runs.sqlite")), tools=[weather_tool(calls)],
                        constrain=False)
    out = again.invoke(None, CONFIG)
    assert out["final"] == "It is sunny in Rome."
    assert calls == [{"city": "Rome", "days": 1}]  # called once, before the crash
    assert model.count("tool_step") == 1
    assert out["results"][0]["tool_args"] == {"city": "Rome", "days": 1}


def test_the_live_output_and_show_print_a_tool_steps_call_and_result(tmp_path, capsys):
    from hierplan.cli.output import HumanReporter

    _, _, out = run([weather_tool()], ["get_weather", "llm", "llm"], script={"tool_step": ['{"city": "Paris"}']})
    buffer = io.StringIO()
    reporter = HumanReporter(buffer)
    reporter.update("tool_choice", {"plan": out["plan"]})
    reporter.update("tool_step", {"results": [out["results"][0]]})
    reporter.approval_needed("r1", {"plan": out["plan"], "tools": {"get_weather": WEATHER_DESCRIPTION}})
    text = buffer.getvalue()
    assert "[get_weather] Step 1 (get_weather)" in text
    assert 'call: get_weather {"city": "Paris", "days": 1}' in text and "sunny in Paris for 1 day(s)" in text
    assert f"step 1 calls get_weather: Do part 1 ({WEATHER_DESCRIPTION})" in text

    from hierplan.cli.inspect_cmd import print_run
    from hierplan.store.runs import RunRecord

    record = RunRecord(id="r1", task="t", status="done", started=0, updated=0, pid=None, host=None, options={},
                       error=None)
    print_run(record, out)
    shown = capsys.readouterr().out
    assert 'call: get_weather {"city": "Paris", "days": 1}' in shown and "sunny in Paris for 1 day(s)" in shown


def test_the_terminals_plan_editor_takes_the_registered_tools_of_the_request(monkeypatch):
    from hierplan.cli.decide import edit_plan
    from hierplan.errors import UsageError

    monkeypatch.setenv("EDITOR", "true")  # saves the plan as it was shown
    plan = json.loads(plan_json(["get_weather", "llm", "llm"]))
    assert edit_plan(plan, {"get_weather": WEATHER_DESCRIPTION})["steps"][0]["tool"] == "get_weather"
    with pytest.raises(UsageError, match="the edited plan is invalid"):
        edit_plan(plan)


def test_step_lines_show_a_tool_call_with_its_result_and_other_steps_with_their_output_and_files():
    from hierplan.render.text import step_lines

    tool = {"step_id": 2, "tool": "inventory", "ok": True, "output": "{}", "tool_args": {"item": "nut"},
            "tool_result": {"stock": 3}}
    assert step_lines(tool) == ["step 2 [inventory, ok]", '    call: inventory {"item": "nut"} -> {"stock": 3}']
    failed = {"step_id": 1, "tool": "python", "ok": False, "error": "ZeroDivisionError", "output": " 7 \n",
              "artifacts": [{"name": "a.png", "media_type": "image/png", "size": 2048}]}
    assert step_lines(failed) == ["step 1 [python, failed: ZeroDivisionError]", "    7",
                                  "    saved out/a.png (image/png, 2,048 bytes)"]
