"""Repairs of programs that did not parse, printed nothing or read a name never set are asked under the
straight-line grammar and the names in scope, where the model takes them; the grammar itself admits plain
programs and, on the embedded model, yields code that compiles and reads only names it has."""

from __future__ import annotations

from typing import ClassVar

import pytest
from fakes import FakeExecution, ScriptedChatModel, scripted_runner

from hierplan.config import SamplingConfig
from hierplan.nodes.code_grammar import (ARITHMETIC_BUILTINS, ARITHMETIC_GRAMMAR, GRAMMAR_BUILTINS,
                                         STRAIGHT_LINE_GRAMMAR, STRAIGHT_LINE_HINT, assigned_names, repair_options)
from hierplan.nodes.python_step import make_python_step

STEP = {"id": 1, "title": "Add", "instruction": "Add 2 and 3", "tool": "python", "expected_output": "5"}
STATE = {"task": "t", "plan": {"goal": "g", "assumptions": [], "steps": [STEP]}, "results": [], "step": STEP}


class GrammarFake(ScriptedChatModel):
    accepts_grammar: ClassVar[bool] = True


def _run(model, replies_ok):
    runner = scripted_runner([FakeExecution(*r) for r in replies_ok])
    return make_python_step(model, SamplingConfig(), runner)(STATE)["results"][0]


def test_after_a_reply_that_does_not_parse_the_repairs_are_asked_under_the_grammar():
    model = GrammarFake(script={"python_step": ["The answer is 5.", "x = 2 +", "print(2 + 3)"]})
    result = _run(model, [(True, "5\n")])
    assert result["ok"]
    grammars = [call["kwargs"].get("grammar") for call in model.calls]
    assert grammars == [None, STRAIGHT_LINE_GRAMMAR, STRAIGHT_LINE_GRAMMAR]
    assert [a["constrained"] for a in result["attempts"]] == [False, True, True]
    assert STRAIGHT_LINE_HINT in model.calls[1]["messages"][-1].content


def test_a_runtime_error_is_repaired_without_the_grammar():
    model = GrammarFake(script={"python_step": ["print(1/0)", "print(5)"]})
    _run(model, [(False, "", "ZeroDivisionError: division by zero", "error"), (True, "5\n")])
    assert [call["kwargs"].get("grammar") for call in model.calls] == [None, None]


def test_a_program_that_printed_nothing_is_repaired_under_the_grammar():
    model = GrammarFake(script={"python_step": ["def f(x):\n    return x", "print(5)"]})
    _run(model, [(True, ""), (True, "5\n")])
    assert [call["kwargs"].get("grammar") for call in model.calls] == [None, STRAIGHT_LINE_GRAMMAR]


def test_a_name_error_is_repaired_under_the_grammar_reading_the_earlier_programs_names():
    first = {"id": 1, "title": "Cost", "instruction": "Cost of 3 pens at $2", "tool": "python",
             "expected_output": "6"}
    step = {**STEP, "id": 2, "depends_on": [1], "instruction": "Add 5 to the cost"}
    earlier = {"step_id": 1, "title": "Cost", "tool": "python", "ok": True, "output": "6",
               "code": "pens = 3\nfor i in range(1):\n    cost = pens * 2\nprint(cost)"}
    state = {"task": "t", "plan": {"goal": "g", "assumptions": [], "steps": [first, step]}, "results": [earlier],
             "step": step}
    model = GrammarFake(script={"python_step": ["print(costs + 5)", "print(cost + 5)"]})
    runner = scripted_runner([FakeExecution(False, "", "NameError: name 'costs' is not defined", "error"),
                              FakeExecution(True, "11\n")])
    assert make_python_step(model, SamplingConfig(), runner)(state)["results"][0]["ok"]
    assert "python_scope" not in model.calls[0]["kwargs"]
    repair = model.calls[1]["kwargs"]
    assert repair["grammar"] == STRAIGHT_LINE_GRAMMAR
    assert set(repair["python_scope"]) == {"pens", "i", "cost", "True", "False", "None"}
    assert repair["python_calls"] == sorted(GRAMMAR_BUILTINS)


def test_in_a_numeric_task_repairs_are_arithmetic_reading_only_values_earlier_programs_left():
    earlier = "def cost(n):\n    each = 2\n    return n * each\npens = 3\nprint(cost(pens))"
    options = repair_options(GrammarFake(), [earlier], numeric=True)
    assert options["grammar"] == ARITHMETIC_GRAMMAR
    assert options["python_scope"] == ["pens"]
    assert options["python_calls"] == sorted(ARITHMETIC_BUILTINS)


def test_assigned_names_anywhere_or_once_the_program_has_run():
    code = ("import math as m\nx = 1\ndef f(y):\n    z = y\n    return [w for w in range(3)]\n"
            "for i in range(2):\n    t = i\n")
    assert assigned_names(code) == {"m", "x", "f", "z", "w", "i", "t"}
    assert assigned_names(code, module_level=True) == {"m", "x", "f", "i", "t"}
    assert assigned_names(code, module_level=True, values_only=True) == {"x", "i", "t"}
    assert assigned_names("x = (") == set()


def test_a_model_that_takes_no_grammar_gets_no_repair_options():
    assert repair_options(ScriptedChatModel(), ["x = 1"]) == {}


def test_a_model_that_takes_no_grammar_gets_the_same_repair_without_one():
    model = ScriptedChatModel(script={"python_step": ["The answer is 5.", "print(5)"]})
    _run(model, [(True, "5\n")])
    assert all("grammar" not in call["kwargs"] for call in model.calls)
    assert STRAIGHT_LINE_HINT not in model.calls[1]["messages"][-1].content


@pytest.fixture(scope="module")
def embedded_chat():
    from hierplan.models.loader import load_chat_model

    return load_chat_model()


def _admits(chat, lark: str):
    """admits(text): whether ``lark`` (valid for llguidance on the model's tokenizer) derives ``text``."""
    import llguidance
    import llguidance.hf

    tokenizer = chat.tokenizer
    lltok = llguidance.hf.from_tokenizer(tokenizer)
    grammar = llguidance.LLMatcher.grammar_from_lark(lark)
    assert llguidance.LLMatcher.validate_grammar(grammar, lltok) == ""

    def admits(text: str) -> bool:
        matcher = llguidance.LLMatcher(lltok, grammar)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        return all(matcher.consume_token(t) for t in ids) and matcher.is_accepting()

    return admits


@pytest.mark.real_model
def test_the_grammar_admits_plain_programs_and_refuses_prose_and_definitions(embedded_chat):
    admits = _admits(embedded_chat, STRAIGHT_LINE_GRAMMAR)
    assert admits("```python\npens = 3\ncost = pens * (2 + 0.5)\nprint(round(cost, 2))\n```")
    assert admits("```python\nwords = 'a b a'.split()\nprint(sorted(words)[0], len(words))\n```")
    assert admits("```python\nn = 3\nprint(n, \"pens\")\n```")
    assert not admits("```python\nn = 3\nprint(f\"{n} pens\")\n```")  # no f-strings
    assert not admits("```python\ndeff = 3\nprint(deff)\n```")  # starts like a statement
    assert not admits("```python\nx = 3\nprint(fratio(x))\n```")  # calls only the listed builtins
    assert not admits("The answer is 5.")
    assert not admits("```python\ndef f():\n    return 5\n```")
    assert not admits("```python\nx = 5\n```")  # must end with a print


@pytest.mark.real_model
def test_the_arithmetic_grammar_admits_arithmetic_and_refuses_strings_and_misused_builtins(embedded_chat):
    admits = _admits(embedded_chat, ARITHMETIC_GRAMMAR)
    assert admits("```python\npens = 3\ncost = pens * (2 + 0.5)\nprint(round(cost, 2))\n```")
    assert admits("```python\nx = max(3, 4) + sum([1, 2]) // abs(-2)\nprint(-x)\n```")
    assert admits("```python\nx = 2\nprint(round(x * (3 + x) / 7, 2))\n```")
    assert not admits("```python\nx = min(3)\nprint(x)\n```")  # min and max take several
    assert not admits("```python\nx = len(3)\nprint(x)\n```")
    assert not admits("```python\nx = float('3')\nprint(x)\n```")
    assert not admits("```python\nn = 3\nprint(n, \"pens\")\n```")


@pytest.mark.real_model
def test_on_the_embedded_model_a_grammar_reply_is_a_program_that_compiles(embedded_chat):
    from langchain_core.messages import HumanMessage

    from hierplan.nodes.json_extract import strip_code_fences

    prompt = [HumanMessage("Write a Python program: a shop sells pens for $2 each; Tom buys 3 pens. "
                           "Print the cost.")]
    for seed in range(3):
        text = embedded_chat.invoke(prompt, grammar=STRAIGHT_LINE_GRAMMAR, max_tokens=120, temperature=0.7,
                                    seed=seed).content
        code = strip_code_fences(text)
        compile(code, "<reply>", "exec")
        assert text.startswith("```python\n") and "print(" in code.splitlines()[-1]


@pytest.mark.real_model
def test_on_the_embedded_model_a_scoped_reply_reads_only_names_it_has(embedded_chat):
    import ast

    from langchain_core.messages import HumanMessage

    from hierplan.nodes.json_extract import strip_code_fences

    # Asked to use names nothing defines (without the scope, the embedded model reads `f`: a NameError).
    prompt = [HumanMessage("Write a Python program that prints total_cost, computed from price_per_pen and "
                           "number_of_pens, which step 1 already computed (a pen costs $2, Tom buys 3).")]
    options = repair_options(embedded_chat, ["price = 2"])
    for seed in range(3):
        text = embedded_chat.invoke(prompt, max_tokens=120, temperature=0.7, seed=seed, **options).content
        tree = ast.parse(strip_code_fences(text))
        known = set(options["python_scope"]) | set(options["python_calls"]) | {"print"}
        for line in tree.body:
            reads = {n.id for n in ast.walk(line) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            assert reads <= known, (seed, text)
            known |= {n.id for n in ast.walk(line) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
