"""A model per role (hierplan.roles): the planner's, the executor's and the aggregator's calls each go to their
own model, from Python (build_graph's mapping) and from the command line (--planner-model and the like), and
the run records each role's model."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import chain

import pytest

from fakes import FakeExecution, ScriptedChatModel, plan_json, scripted_runner
from helpers import cli, events
from hierplan import build_graph
from hierplan.app.agent import load_models, role_options
from hierplan.app.fields import OptionError, from_form, from_mapping
from hierplan.options import RunOptions
from hierplan.roles import NODES, ROLES, role_models

NUMERIC_TASK = "A pen costs 3 dollars. How many dollars do 7 pens cost?"
WRITING_TASK = "Write a checklist of exactly 3 bullet points about tea. Do not use the word 'very'."
GOOD = "- Green tea\n- Black tea\n- Herbal tea"
REVISION = json.dumps({"steps": [
    {"id": 1, "title": "Estimate by hand", "instruction": "Reason it out", "tool": "llm", "expected_output": "n"}]})
# Which of a role's nodes each fake's node_of names (the checker's calls are "python_check", the planner's retry
# "planner_retry").
CALLS = {"planner": {"planner", "planner_retry", "replanner"},
         "executor": {"python_step", "llm_step", "tool_step", "python_check"},
         "aggregator": {"aggregator", "reviser", "plain_answer"}}


def nodes(model: ScriptedChatModel) -> list[str]:
    return [c["node"] for c in model.calls]


def named(name: str, **kwargs) -> ScriptedChatModel:
    """A fake that says which model it is, as a loaded model does (hierplan.app.agent.model_info)."""
    return ScriptedChatModel(metadata={"hierplan_model": {"name": name, "engine": "fake"}}, **kwargs)


def test_each_role_calls_its_own_model_on_a_numeric_task():
    planner = ScriptedChatModel(script={"planner": [plan_json(["python", "llm"])]})
    executor = ScriptedChatModel(script={"python_step": ["print(3 * 7)"]},
                                 default={"python_check": "```python\nprint(21)\n```"})
    aggregator = ScriptedChatModel(script={"aggregator": ["Seven pens cost 21 dollars.\nFinal answer: 21"]})
    runner = scripted_runner([FakeExecution(True, "21\n") for _ in range(10)])
    graph = build_graph({"planner": planner, "executor": executor, "aggregator": aggregator}, run_code=runner,
                        constrain=False, explain=True)  # explain: the voted number's answer is the aggregator's
    # two questions: the plan keeps its python and llm steps (one question would be one program, rules.plan)
    out = graph.invoke({"task": NUMERIC_TASK + " What does one pen cost?", "kind": "numeric"},
                       {"configurable": {"thread_id": "n"}})
    assert nodes(planner) == ["planner"]
    assert set(nodes(executor)) == {"python_step", "llm_step", "python_check"}  # the steps and the checker
    assert nodes(aggregator) == ["aggregator"]
    assert out["final"].endswith("Final answer: 21")


def test_the_replanner_runs_on_the_planners_model_and_the_reviser_on_the_aggregators():
    small = ScriptedChatModel(default={"python_step": "print(x)"})
    big = ScriptedChatModel(script={"planner": [plan_json(["llm", "python", "llm"])], "replanner": [REVISION]})
    writer = ScriptedChatModel(script={"aggregator": ["Final answer: 3"], "reviser": [GOOD]})
    runner = scripted_runner([FakeExecution(False, "", "NameError: name 'x' is not defined", "error")])
    graph = build_graph({"default": small, "planner": big, "aggregator": writer}, run_code=runner,
                        constrain=False, max_repairs=0, split_writing=True)  # the checklist's steps are planned
    out = graph.invoke({"task": WRITING_TASK, "kind": "writing"}, {"configurable": {"thread_id": "w"}})
    assert nodes(big) == ["read_requirements", "planner", "replanner"] and len(out["replans"]) == 1
    assert nodes(writer) == ["aggregator", "reviser"] and out["final"] == GOOD
    assert set(nodes(small)) == {"llm_step", "python_step"}


def test_one_model_is_every_roles_and_a_mapping_may_name_the_default_only():
    model = ScriptedChatModel()
    assert role_models(model) == dict.fromkeys(ROLES, model)
    assert role_models({"default": model}) == dict.fromkeys(ROLES, model)
    other = ScriptedChatModel()
    assert role_models({"default": model, "planner": other, "aggregator": None}) == {
        "planner": other, "executor": model, "aggregator": model}  # None: the default
    assert role_models(None) is None


def test_an_unknown_or_missing_role_or_a_non_chat_model_is_refused():
    model = ScriptedChatModel()
    with pytest.raises(ValueError, match="unknown model role 'planer': the roles are planner, executor, aggregator"):
        build_graph({"default": model, "planer": model})
    with pytest.raises(ValueError, match="no model for the roles executor, aggregator"):
        build_graph({"planner": model})
    with pytest.raises(TypeError, match="the executor model must be a LangChain BaseChatModel, got str"):
        build_graph({"default": model, "executor": "Qwen/Qwen2.5-1.5B-Instruct"})
    with pytest.raises(TypeError, match="^model must be a LangChain BaseChatModel"):
        build_graph("Qwen/Qwen2.5-1.5B-Instruct")


def test_the_roles_name_every_model_calling_node_of_the_graph_once():
    # a graph with a response_format: structured_answer is drawn only there
    graph_nodes = set(build_graph(None, checkpointer=False, response_format={"type": "object"}).get_graph().nodes)
    role_nodes = list(chain(*NODES.values()))
    assert len(role_nodes) == len(set(role_nodes)) and set(role_nodes) <= graph_nodes
    assert set(role_nodes) == {"read_requirements", "planner", "replanner", "python_step", "llm_step", "tool_step", "checker",
                               "aggregator", "reviser", "plain_answer",
                                "structured_answer"}


def test_each_distinct_model_loads_once_with_the_runs_other_model_options():
    loads = []

    def load(options):
        loads.append(options)
        return ScriptedChatModel()

    models = load_models(RunOptions(model="a", executor_model="a", aggregator_model="b", seed=3), load)
    assert [o.model for o in loads] == ["a", "b"] and models["planner"] is models["executor"]
    assert all(o.seed == 3 and o.aggregator_model is None for o in loads)  # the loader sees no role options
    # A remote planner over the local default: --base-url goes to the remote model, --engine to the local ones.
    each = role_options(RunOptions(planner_model="openai:big", base_url="http://gpu:8000/v1", engine="llama.cpp"))
    assert (each["planner"].model, each["planner"].base_url, each["planner"].engine) == (
        "openai:big", "http://gpu:8000/v1", None)
    assert (each["executor"].model, each["executor"].base_url, each["executor"].engine) == (None, None, "llama.cpp")
    # One kind of model: every option goes to each, as to a single model (a wrong one still fails the load).
    same = role_options(RunOptions(model="a", planner_model="b", base_url="http://gpu:8000/v1"))
    assert {o.base_url for o in same.values()} == {"http://gpu:8000/v1"}


def test_the_role_options_are_checked_as_every_option_and_are_not_the_web_forms():
    assert from_mapping({"planner_model": "openai:big"}) == {"planner_model": "openai:big"}
    with pytest.raises(OptionError, match="planner_model"):
        from_mapping({"planner_model": 7})
    assert "planner_model" not in from_form({"planner_model": "x", "seed": "3"})  # the page's models are its server's


@pytest.fixture
def by_name(monkeypatch):
    """Every model the CLI loads, by the name it was asked for: "big" or the default (None); ``loads`` records
    each name loaded."""
    import hierplan.models

    models = {"big": named("big", script={"planner": [plan_json(["llm", "llm", "llm"])]}),
              None: named("small", default={"aggregator": "THE ANSWER"})}
    loads = []

    def load(model=None, **kwargs):
        loads.append(model)
        return models[model]

    monkeypatch.setattr(hierplan.models, "load_chat_model", load, raising=False)
    return models, loads


def test_the_cli_runs_the_planner_on_its_own_model_and_records_each_roles_model(by_name, tmp_path):
    models, loads = by_name
    db = str(tmp_path / "roles.sqlite")
    code, out, err = cli("run", "Write a plan about tea.", "--split-writing", "--planner-model", "big", "--json",
                         "--db", db, "--run-id", "r1")  # a plan has parts: with --split-writing, the planner plans it
    assert code == 0, err
    assert loads == ["big", None]  # the default model once, for the executor and the aggregator
    assert nodes(models["big"]) == ["read_requirements", "planner"] and "planner" not in nodes(models[None])
    assert set(nodes(models[None])) == {"llm_step", "aggregator"}
    started = events(out)[0]
    big, small = {"name": "big", "engine": "fake"}, {"name": "small", "engine": "fake"}
    assert started["model"] == small and started["models"] == {"planner": big, "executor": small, "aggregator": small}
    code, out, err = cli("show", "r1", "--db", db)
    assert code == 0 and "model: planner: big on fake; executor, aggregator: small on fake" in out, err
    code, out, _ = cli("show", "r1", "--json", "--db", db)
    run = json.loads(out)["run"]
    assert run["model"] == small and run["models"]["planner"] == big
    code, out, _ = cli("runs", "--json", "--db", db)
    assert json.loads(out)[0]["models"]["aggregator"] == small


def test_a_run_on_one_model_records_it_as_before(by_name, tmp_path):
    db = str(tmp_path / "one.sqlite")
    by_name[0][None].script["planner"] = [plan_json(["llm", "llm", "llm"])]
    code, out, err = cli("run", "Write about tea.", "--json", "--db", db, "--run-id", "o1")
    assert code == 0, err
    assert by_name[1] == [None] and "models" not in events(out)[0]
    code, out, _ = cli("runs", "--json", "--db", db)
    [run] = json.loads(out)
    assert run["model"] == {"name": "small", "engine": "fake"} and "models" not in run


def test_the_role_flags_are_listed_and_help_imports_no_torch_or_langgraph():
    code = ("import sys; from hierplan.cli.main import main\n"
            "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in ('torch', 'transformers', 'langgraph', 'langchain_core') if m in sys.modules)\n"
            "assert not heavy, heavy\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    help_text = " ".join(proc.stdout.split())
    for flag in ("--planner-model MODEL", "--executor-model MODEL", "--aggregator-model MODEL"):
        assert flag in help_text
    assert help_text.count("(default: --model)") == 3
