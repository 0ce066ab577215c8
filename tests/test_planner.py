"""The planner's three unconstrained paths, the constrained path, and JSON extraction."""

from __future__ import annotations

import pytest

from fakes import ScriptedChatModel, StructuredScriptedChatModel, plan_json
from hierplan.config import PLANNER_MAX_NEW_TOKENS, SamplingConfig
from hierplan.nodes import prompts
from hierplan.nodes.json_extract import NoJSONFound, extract_json_object
from hierplan.rules.text import strip_code_fences
from langgraph.runtime import Runtime

from hierplan.nodes.planner import make_planner, parse_plan
from hierplan.options import RunOptions
from hierplan.models.hf.json_grammar import schema_regex
from hierplan.schema import DraftPlan, Plan


def run_planner(replies: dict, constrain: bool = True, method: str | None = None):
    """method None: a model without structured output (NotImplementedError); else the structured fake."""
    model = ScriptedChatModel(script=replies) if method is None else StructuredScriptedChatModel(
        script=replies, method=method)
    update = make_planner(model, SamplingConfig())({"task": "Plan a picnic"}, 
                                                      Runtime(context=RunOptions(constrain=constrain)))
    return model, update


@pytest.mark.parametrize("style", ["plain", "fenced", "prose"])
def test_model_path_parses_fenced_inline_and_prose_json(style):
    text = plan_json(["llm", "python", "none"], fenced=style == "fenced", prose=style == "prose")
    model, update = run_planner({"planner": [text]})
    assert update["plan_source"] == "model"
    # As the model wrote them: the tool_choice node after the planner decides the tools.
    assert [s["tool"] for s in update["plan"]["steps"]] == ["llm", "python", "none"]
    assert update["plan_failures"] == []
    assert model.count("planner") == 1 and model.count("planner_retry") == 0


def test_retry_path_uses_the_stricter_prompt_and_records_the_failed_text():
    model, update = run_planner({"planner": ["I would first buy bread, then..."],
                                 "planner_retry": [plan_json(["llm", "llm", "llm", "python"])]})
    assert update["plan_source"] == "retry"
    assert len(update["plan"]["steps"]) == 4
    assert update["plan_failures"] == [{"source": "model", "raw": "I would first buy bread, then...",
                                        "error": "no JSON object found in the model's reply"}]
    assert model.calls[1]["messages"][0].content == prompts.PLANNER_RETRY_SYSTEM


def test_fallback_after_two_failures_is_three_llm_steps():
    too_many = plan_json(["llm"] * 9)  # valid JSON, but 9 steps
    model, update = run_planner({"planner": ["{broken"], "planner_retry": [too_many]})
    assert update["plan_source"] == "fallback"
    plan = update["plan"]
    assert [s["title"] for s in plan["steps"]] == ["Analyse the task", "Execute", "Refine"]
    assert {s["tool"] for s in plan["steps"]} == {"llm"}
    assert plan["goal"] == "Plan a picnic"
    assert [f["raw"] for f in update["plan_failures"]] == ["{broken", too_many]
    assert "steps" in update["plan_failures"][1]["error"]


def test_a_grammar_plan_is_the_constrained_source_and_the_call_carries_sampling_and_schema():
    model, update = run_planner({"planner": [plan_json(["python", "llm", "llm"])]}, method="grammar")
    assert update["plan_source"] == "constrained" and update["plan_failures"] == []
    kwargs = model.calls[0]["kwargs"]
    assert kwargs["response_format"] is DraftPlan
    assert kwargs["temperature"] == 0.2 and kwargs["max_tokens"] == PLANNER_MAX_NEW_TOKENS and kwargs["top_p"] == 0.9
    assert model.count("planner") == 1 and model.count("planner_retry") == 0


@pytest.mark.parametrize("method", ["json_schema", "json_object", "tool_calling"])
def test_a_server_side_structured_plan_keeps_the_servers_method_as_its_source(method):
    _, update = run_planner({"planner": [plan_json(["llm"] * 3)]}, method=method)
    assert update["plan_source"] == method


def test_an_invalid_structured_plan_goes_to_the_strict_retry():
    model, update = run_planner({"planner": ["{broken"], "planner_retry": [plan_json(["llm"] * 3)]},
                                method="json_object")
    assert update["plan_source"] == "retry"
    assert update["plan_failures"][0]["source"] == "json_object"
    assert "response_format" not in model.calls[1]["kwargs"] and model.calls[1]["kwargs"]["temperature"] == 0.0


def test_constrain_off_never_asks_for_structured_output():
    model, update = run_planner({"planner": [plan_json(["llm"] * 3)]}, constrain=False, method="grammar")
    assert update["plan_source"] == "model" and "response_format" not in model.calls[0]["kwargs"]


@pytest.mark.parametrize("kind", ["numeric", "writing"])
def test_the_worked_examples_of_the_tasks_kind_come_before_the_task_in_both_attempts(kind):
    model = ScriptedChatModel(script={"planner": ["nope"], "planner_retry": [plan_json(["llm"] * 3)]})
    make_planner(model, SamplingConfig())({"task": "Plan a picnic", "kind": kind}, Runtime(context=RunOptions()))
    shown = [task for task, _ in prompts.PLANNER_EXAMPLES[kind]]
    for call in model.calls:
        messages = call["messages"]
        assert [m.type for m in messages] == ["system"] + ["human", "ai"] * len(shown) + ["human"]
        assert [m.content for m in messages[1:-1:2]] == [prompts.PLANNER_USER.format(task=t) for t in shown]
        assert messages[-1].content == "Task: Plan a picnic"


def test_worked_examples_are_what_the_grammar_would_produce():
    import re

    from hierplan.nodes.planner import example_turns

    grammar = re.compile(schema_regex(DraftPlan))
    replies = [m.content for kind in prompts.PLANNER_EXAMPLES for m in example_turns(kind) if m.type == "ai"]
    assert replies and all(grammar.fullmatch(r) for r in replies)
    assert {s.tool for r in replies for s in parse_plan(r).steps} == {"python", "llm"}


def test_a_one_step_plan_is_valid_and_the_budget_lets_a_plan_of_every_allowed_length_fit():
    """The step count comes from the task: one step is a plan, and the planner's budget does not cut the schema
    (llama.cpp's path fits a plan schema to max_tokens) below schema.MAX_STEPS."""
    from hierplan.models.remote.structured import server_schema
    from hierplan.schema import MAX_STEPS

    _, update = run_planner({"planner": [plan_json(["python"])]}, method="grammar")
    assert update["plan_source"] == "constrained" and len(update["plan"]["steps"]) == 1
    lengths = server_schema(DraftPlan, budget=PLANNER_MAX_NEW_TOKENS)["properties"]["steps"]["anyOf"]
    assert [n["maxItems"] for n in lengths] == list(range(1, MAX_STEPS + 1))


def test_the_worked_examples_show_one_program_for_a_quantity_and_a_step_per_part_for_writing():
    numeric = [plan["steps"] for _, plan in prompts.PLANNER_EXAMPLES["numeric"]]
    assert all(len(steps) == 1 and steps[0]["tool"] == "python" for steps in numeric)
    writing = [len(plan["steps"]) for _, plan in prompts.PLANNER_EXAMPLES["writing"]]
    assert min(writing) == 1 and max(writing) >= 3


def test_draft_bounds_are_tighter_than_plan_bounds():
    """Whatever the constrained planner writes is a valid Plan; an edited plan may be longer than a draft."""
    long_edit = {"goal": "g" * 200, "assumptions": [], "steps": [
        {"id": i, "title": "t", "instruction": "x" * 400, "tool": "llm"} for i in (1, 2, 3)]}
    Plan.model_validate(long_edit)
    with pytest.raises(ValueError):
        DraftPlan.model_validate(long_edit)


def test_seeded_planner_calls_get_a_seed_per_attempt():
    model = ScriptedChatModel(script={"planner": ["nope"], "planner_retry": [plan_json(["llm"] * 3)]})
    make_planner(model, SamplingConfig(seed=7))({"task": "Plan a picnic"}, Runtime())
    seeds = [c["kwargs"]["seed"] for c in model.calls]
    assert len(set(seeds)) == 2 and all(isinstance(s, int) for s in seeds)
    again = ScriptedChatModel(script={"planner": ["nope"], "planner_retry": [plan_json(["llm"] * 3)]})
    make_planner(again, SamplingConfig(seed=7))({"task": "Plan a picnic"}, Runtime())
    assert [c["kwargs"]["seed"] for c in again.calls] == seeds


def test_planner_records_its_model_calls():
    _, update = run_planner({"planner": ["nope"], "planner_retry": [plan_json(["llm"] * 3)]})
    assert [c["node"] for c in update["calls"]] == ["planner", "planner"]


@pytest.mark.parametrize("bad, reason", [
    (plan_json(["llm"] * 9), "at most 8"),
    (plan_json(["llm", "bash", "llm"]), "tool"),
    ('{"goal": "g", "assumptions": [], "steps": [{"id": 2, "title": "a", "instruction": "b", "tool": "llm"},'
     '{"id": 1, "title": "a", "instruction": "b", "tool": "llm"},{"id": 3, "title": "a", "instruction": "b",'
     ' "tool": "llm"}]}', "in order"),
    (plan_json(["llm"] * 3, depends={2: [3]}), "not an earlier step"),
])
def test_invalid_plans_are_rejected(bad, reason):
    with pytest.raises(ValueError, match=reason):
        parse_plan(bad)


def test_tool_names_are_normalised():
    plan = parse_plan(plan_json(["LLM", " Python ", "none"]))
    assert [s.tool for s in plan.steps] == ["llm", "python", "none"]


def test_extract_json_prefers_the_fenced_block_and_skips_braces_in_prose():
    text = 'Use {curly} braces. ```json\n{"a": 1}\n``` and {"b": 2}'
    assert extract_json_object(text) == {"a": 1}
    assert extract_json_object('set {x} then {"b": 2} done') == {"b": 2}
    with pytest.raises(NoJSONFound):
        extract_json_object("no json [1, 2] here")


def test_strip_code_fences():
    assert strip_code_fences("Here:\n```python\nprint(1)\n```\nDone") == "print(1)"
    assert strip_code_fences("print(2)") == "print(2)"
    assert strip_code_fences("```\nx = 1\nprint(x)") == "x = 1\nprint(x)"


def test_prose_around_unfenced_code_is_dropped():
    assert strip_code_fences("Here is the code:\nx = 3 * 7\nprint(x)\nThis prints 21.") == "x = 3 * 7\nprint(x)"
    assert strip_code_fences("print(1 +") == "print(1 +"  # nothing compiles: left for the repair loop


class ToolCallingScriptedChatModel(StructuredScriptedChatModel):
    """As a server that constrains by tool calling: the plan arrives in the tool call, the content is empty."""

    method: str = "tool_calling"

    def with_structured_output(self, schema, *, include_raw: bool = False, **kwargs):
        inner = super().with_structured_output(schema, include_raw=True, **kwargs)

        class Structured:
            def invoke(self, messages, config=None, **call_kwargs):
                result = inner.invoke(messages, config, **call_kwargs)
                result["raw"].content = ""
                return result

        return Structured()


def test_a_plan_that_arrives_as_a_tool_call_is_used_without_a_retry():
    model = ToolCallingScriptedChatModel(script={"planner": [plan_json(["llm", "llm", "llm"])]})
    update = make_planner(model, SamplingConfig())({"task": "Plan a picnic"}, Runtime())
    assert update["plan_source"] == "tool_calling"
    assert update["plan_failures"] == []
    assert len(update["plan"]["steps"]) == 3 and model.count("planner_retry") == 0


def test_a_graph_with_tools_shows_the_planner_a_worked_plan_that_calls_one():
    from langchain_core.tools import tool

    @tool
    def stock(sku: str) -> str:
        """Units in stock of a product."""
        return "3"

    def planner_prompt(tools):
        model = ScriptedChatModel(script={"planner": [plan_json(["python"])]}, default={"python_step": "print(1)"})
        node = make_planner(model, SamplingConfig(), tools)
        node({"task": "How many units of A-B do we have?", "kind": "numeric"},
             Runtime(context=RunOptions(constrain=False)))
        return " ".join(str(m.content) for m in model.calls[0]["messages"])

    shown = planner_prompt([stock])
    for task, _, plan in prompts.TOOL_EXAMPLES:  # a lookup and a computation on a looked-up value
        assert task in shown and f'"tool":"{plan["steps"][0]["tool"]}"' in shown
    assert "- stock: Units in stock" in shown
    assert prompts.TOOL_EXAMPLES[0][0] not in planner_prompt([])  # no tools: the prompt is unchanged


def test_a_run_with_files_shows_the_planner_a_one_program_plan_over_a_previewed_file():
    def planner_prompt(files):
        model = ScriptedChatModel(script={"planner": [plan_json(["python"])]})
        make_planner(model, SamplingConfig())({"task": "What is the total in a.csv?", "kind": "numeric",
                                               **({"files": files} if files else {})},
                                              Runtime(context=RunOptions(constrain=False)))
        return [str(m.content) for m in model.calls[0]["messages"]]

    task, name, _, _ = prompts.FILE_EXAMPLE
    shown = planner_prompt([{"name": "a.csv", "size": 4, "preview": "CSV, 1 rows; columns: x (int)"}])
    example = next(m for m in shown if task in m)
    assert f"- {name} (" in example and "columns: date (text), region (text)" in example  # previewed for real
    assert '"steps":[{"id":1' in shown[shown.index(example) + 1] and shown[-1].endswith("columns: x (int)")
    assert not any(task in m for m in planner_prompt([]))  # no files: the prompt is unchanged
