"""Grammar-constrained plan decoding (hierplan.models.hf.constrained)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from hierplan.cli.run_cmd import DEMO_TASK
from hierplan.models.hf.constrained import schema_regex, worst_case_json_bytes
from hierplan.nodes import prompts
from hierplan.schema import Plan

# The product's own planner prompt, on three kinds of task: a checklist, a word problem, free writing.
TASKS = [
    DEMO_TASK,
    "Janet's ducks lay 16 eggs per day. She eats three and bakes muffins with four. She sells the rest at $2 "
    "each. How much does she make every day?",
    "Write a short poem about the sea at night.",
]


def planner_messages(task: str) -> list:
    from langchain_core.messages import HumanMessage, SystemMessage

    return [SystemMessage(prompts.PLANNER_SYSTEM), HumanMessage(prompts.PLANNER_USER.format(task=task))]


def _plan_dict(n_steps: int) -> dict:
    return {
        "goal": 'Say "hi"\nthen stop',
        "assumptions": ["none"],
        "steps": [
            {
                "id": i,
                "title": f"Step {i}",
                "instruction": "Do it: print(\"x\") \\ done",
                "tool": "python",
                "expected_output": "",
                "depends_on": None if i == 1 else list(range(1, i)),
            }
            for i in range(1, n_steps + 1)
        ],
    }


def test_a_model_without_structured_output_says_so():
    """The planner's cue for its text path: langchain's default raises NotImplementedError."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    fake = GenericFakeChatModel(messages=iter([AIMessage(content="{}")]))
    with pytest.raises(NotImplementedError):
        fake.with_structured_output(Plan, include_raw=True)


def test_import_does_not_import_torch():
    code = "import sys, hierplan.models.hf.constrained; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("n_steps", [1, 3, 5, 8])
def test_grammar_accepts_valid_compact_plans(n_steps):
    text = json.dumps(_plan_dict(n_steps), separators=(",", ":"), ensure_ascii=False)
    assert re.fullmatch(schema_regex(Plan), text)
    Plan.model_validate_json(text)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda p: p["steps"].__setitem__(1, {**p["steps"][1], "id": 3}),  # ids out of order
        lambda p: p["steps"].__setitem__(1, {**p["steps"][1], "depends_on": [2]}),  # not an earlier step
        lambda p: p.__setitem__("steps", []),  # too few steps
        lambda p: p.__setitem__("steps", p["steps"] * 3),  # too many steps
        lambda p: p.__setitem__("goal", "x" * 301),  # too long
        lambda p: p.__setitem__("goal", ""),  # too short
        lambda p: p["steps"][0].__setitem__("tool", "bash"),
    ],
)
def test_grammar_rejects_invalid_plans(mutate):
    plan = _plan_dict(4)
    mutate(plan)
    assert not re.fullmatch(schema_regex(Plan), json.dumps(plan, separators=(",", ":")))


def test_grammar_has_no_unicode_escapes():
    # A lone \ud800 escape would match a naive JSON string grammar but fails Plan.model_validate_json.
    plan = _plan_dict(3)
    text = json.dumps(plan, separators=(",", ":")).replace('"Step 1"', '"Step \\ud800"')
    assert not re.fullmatch(schema_regex(Plan), text)


def test_worst_case_bound_is_an_upper_bound():
    longest = _plan_dict(8)
    longest["goal"] = "\u20ac" * 300
    text = json.dumps(longest, separators=(",", ":"), ensure_ascii=False)
    assert len(text.encode()) <= worst_case_json_bytes(Plan)


# ---------------------------------------------------------------- real model


@pytest.mark.real_model
def test_the_processor_constrains_a_plain_generate_call(tmp_path):
    """A plain transformers LogitsProcessor: ``model.generate(logits_processor=...)`` alone gives a valid plan."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList
    from test_transformers_engine import save_tiny_qwen2

    from hierplan.models.hf import constrained
    from hierplan.schema import DraftPlan

    folder = save_tiny_qwen2(tmp_path)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    budget = 400
    processor = constrained.grammar_processor(model, tokenizer, DraftPlan, max_new_tokens=budget)
    ids = tokenizer("Plan:", return_tensors="pt")["input_ids"]
    torch.manual_seed(0)
    with torch.inference_mode():
        out = model.generate(ids, do_sample=True, temperature=1.0, top_k=0, max_new_tokens=budget,
                             logits_processor=LogitsProcessorList([processor]))
    new = out[0, ids.shape[1]:].tolist()
    assert new[-1] == tokenizer.eos_token_id and len(new) <= budget
    DraftPlan.model_validate_json(tokenizer.decode(new, skip_special_tokens=True))


@pytest.fixture(scope="module")
def embedded_chat():
    """The embedded SmolLM2 GGUF through the transformers engine, loaded once."""
    from hierplan.models.resolve import embedded_gguf, ModelSpec
    from hierplan.models.hf.engine import load_transformers_chat

    path = embedded_gguf()
    return load_transformers_chat(ModelSpec("gguf", str(path), path.name), device="cpu")


@pytest.mark.real_model
@pytest.mark.slow
def test_constrained_plans_validate_through_pipeline(embedded_chat):
    structured = embedded_chat.with_structured_output(Plan, include_raw=True)
    for task in TASKS:
        out = structured.invoke(planner_messages(task), max_tokens=400, temperature=0.2, seed=0)
        assert out["parsing_error"] is None and out["raw"].response_metadata["hierplan_structured"] == "grammar"
        plan = Plan.model_validate_json(out["raw"].content)
        assert out["parsed"] == plan and [s.id for s in plan.steps] == list(range(1, len(plan.steps) + 1))


@pytest.mark.real_model
@pytest.mark.slow
def test_budget_guard_closes_json_before_max_new_tokens(embedded_chat):
    # A budget just above the closer's reserve: the plan must still be complete and valid.
    out = embedded_chat.with_structured_output(Plan, include_raw=True).invoke(
        planner_messages(TASKS[0]), max_tokens=200, temperature=0)
    assert out["raw"].usage_metadata["output_tokens"] <= 200
    Plan.model_validate_json(out["raw"].content)
