"""bench/vs_model_alone.py on a scripted fake: 2 numeric tasks and 1 writing task, the report's figures checked."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fakes import ScriptedChatModel, plan_json
from hierplan import build_graph
from hierplan.eval.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("vs_model_alone", ROOT / "bench" / "vs_model_alone.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

CHECKLIST = "- check inventory\n- plan routing\n- brief drivers"


class CountingModel(ScriptedChatModel):
    """Reports usage: one generated token per whitespace-separated word of the reply."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        text = super()._generate(messages, stop, run_manager, **kwargs).generations[0].message.content
        n = len(text.split())
        message = AIMessage(text, usage_metadata={"input_tokens": 1, "output_tokens": n, "total_tokens": 1 + n})
        return ChatResult(generations=[ChatGeneration(message=message)])


def baseline_or_step(messages):
    """The baselines' prompts reach the fake as 'llm_step' (an unknown system prompt): answer by prompt."""
    system, question = messages[0].content, messages[-1].content
    if system == bench.COT_SYSTEM:
        return "3 * 14 = 42\nAnswer: 42"  # right on the first task only
    if system == bench.PROGRAM_SYSTEM:  # right on the second task only; run in the real sandbox
        return "```python\nprint(41 if 'sevens' not in %r else 7)\n```" % question
    if system == bench.DIRECT_SYSTEM:
        return "- inventory\n- routing"  # 2 bullets, not 3: one requirement of two met
    return "notes"


def make_model():
    return CountingModel(default={"llm_step": baseline_or_step, "planner": plan_json(["python", "llm", "llm"]),
                                  "python_step": "print(42)", "aggregator": lambda m: (
                                      CHECKLIST if "checklist" in m[-1].content else "The answer is 42.")})


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in [
        {"question": "How many apples do 3 boxes of 14 apples hold?", "answer": "#### 42"},
        {"question": "How many sevens are in 49?", "answer": "#### 7"},
        {"question": "Write a dispatch checklist.", "requirements": [
            {"kind": "bullets", "exactly": 3}, {"kind": "mentions", "all": ["inventory", "routing"]}]}]))
    return load_tasks(path)


def test_bench_runs_every_system_and_reports_counts_interval_tokens(tasks, tmp_path):
    from hierplan.tools import run_python

    model = make_model()
    graph = build_graph(model)
    written = []
    numeric = bench.run_bench(tasks[:2], bench.NUMERIC_SYSTEMS, model=model, graph=graph, seed=11,
                              run_code=run_python, on_record=written.append)
    # the order rotates per task: task 1 starts with cot, task 2 with program
    assert [(r["index"], r["system"]) for r in numeric] == [
        (1, "cot"), (1, "program"), (1, "hierplan"), (2, "program"), (2, "hierplan"), (2, "cot")]
    assert written == numeric
    s = bench.summarize_all(numeric, bench.NUMERIC_SYSTEMS)
    assert [(s[x]["correct"], s[x]["checked"]) for x in ("cot", "program", "hierplan")] == [(1, 2), (1, 2), (1, 2)]
    assert s["cot"]["accuracy_ci95_pct"] == (9.5, 90.5)  # Wilson, 1 of 2
    assert s["cot"]["tokens_per_task"] == 7  # "3 * 14 = 42" and "Answer: 42": 7 words each time
    # both questions are planned by rule (no model plan to count); their one step is a Python step
    assert s["hierplan"]["plan_valid_first_pass_pct"] is None and s["hierplan"]["with_python_pct"] == 100.0
    assert [r["plan_source"] for r in numeric if r["system"] == "hierplan"] == ["rule", "rule"]
    assert s["cot"]["plan_valid_first_pass_pct"] is None and s["cot"]["with_python_pct"] is None
    assert s["hierplan"]["tokens_per_task"] > 0 and s["hierplan"]["errors"] == 0
    program = [r for r in numeric if r["system"] == "program"]
    assert [r["predicted"] for r in program] == ["41", "7"] and all(r["program_ok"] for r in program)

    writing = bench.run_bench(tasks[2:], bench.WRITING_SYSTEMS, model=model, graph=graph, seed=11,
                              run_code=run_python)
    w = bench.summarize_all(writing, bench.WRITING_SYSTEMS)
    assert (w["direct"]["requirements_met"], w["direct"]["requirements_total"]) == (1, 2)
    assert (w["hierplan"]["requirements_met"], w["hierplan"]["requirements_total"]) == (2, 2)
    assert w["direct"]["requirements_met_pct"] == 50.0 and w["hierplan"]["requirements_met_pct"] == 100.0
    # the checklist is one piece, planned by rule (rules.plan), as the bench's own graph (the defaults) plans it:
    # no model plan to count
    assert w["hierplan"]["plan_valid_first_pass_pct"] is None
    assert [r["plan_source"] for r in writing if r["system"] == "hierplan"] == ["rule"]
    # with split_writing the planner plans it, and the checklist's plan is the model's
    split = bench.run_bench(tasks[2:], ("hierplan",), model=model, graph=build_graph(model, split_writing=True),
                            seed=11, run_code=run_python)
    assert [r["plan_source"] for r in split] == ["model"]
    assert bench.summarize_all(split, ("hierplan",))["hierplan"]["plan_valid_first_pass_pct"] == 100.0

    table = bench.render(s, writing=False, meta={"command": "`x`"})
    assert "| right (95% Wilson interval) | 1/2 = 50.0% (9.5-90.5%) | 1/2 = 50.0% (9.5-90.5%) |" in table
    assert "| plans valid on the first pass | – | – | – |" in table
    assert "| requirements met | 50.0% (1/2) | 100.0% (2/2) |" in bench.render(w, writing=True, meta={})


def test_done_records_are_kept_and_the_doc_section_is_replaced(tasks, tmp_path):
    model = make_model()
    earlier = {("cot", 1): {"system": "cot", "index": 1, "correct": True, "seconds": 1.0}}
    records = bench.run_bench(tasks[:1], ("cot",), model=model, graph=None, seed=11, run_code=None, done=earlier)
    assert records == [earlier[("cot", 1)]] and model.calls == []  # nothing rerun

    out = tmp_path / "r.jsonl"
    out.write_text(json.dumps({"settings": {"seed": 11}}) + "\n" + json.dumps(earlier[("cot", 1)]) + "\n")
    assert bench.read_done(out, {"seed": 11}) == earlier
    with pytest.raises(SystemExit, match="other settings"):
        bench.read_done(out, {"seed": 12})

    doc = tmp_path / "eval.md"
    doc.write_text("# Evaluation\n\nkept\n")
    bench.write_doc(doc, "numeric", "T", "first")
    bench.write_doc(doc, "writing", "W", "other")
    bench.write_doc(doc, "numeric", "T", "second")
    text = doc.read_text()
    assert text.startswith("# Evaluation\n\nkept\n") and "first" not in text
    assert text.count("## T") == 1 and "second" in text and "other" in text


def test_main_writes_results_as_it_goes_resumes_and_writes_the_doc(tasks, tmp_path, monkeypatch, capsys):
    import hierplan.models

    models = []
    monkeypatch.setattr(hierplan.models, "load_chat_model", lambda spec=None, **kw: models.append(make_model())
                        or models[-1], raising=False)
    monkeypatch.setattr(bench, "EVAL_DOC", tmp_path / "eval.md")
    path, out = tmp_path / "t.jsonl", tmp_path / "vs.jsonl"
    argv = ["--tasks", str(path), "--limit", "2", "--systems", "cot,hierplan", "--out", str(out), "--doc"]
    assert bench.main(argv) == 0
    lines = out.read_text().splitlines()
    assert json.loads(lines[0])["settings"]["seed"] == 11 and len(lines) == 1 + 4
    doc = (tmp_path / "eval.md").read_text()
    assert "## hierplan vs the model alone: numeric tasks" in doc and "--systems cot,hierplan" in doc
    assert "| right (95% Wilson interval) | 1/2 = 50.0% (9.5-90.5%) | 1/2 = 50.0% (9.5-90.5%) |" in doc
    assert "nproc " in doc
    assert bench.main(argv) == 0  # the same --out again: every record is there, nothing is rerun
    assert len(models) == 2 and models[1].calls == [] and len(out.read_text().splitlines()) == 5
    assert json.loads(out.with_suffix(".summary.json").read_text())["summary"]["cot"]["correct"] == 1
