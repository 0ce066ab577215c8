"""The evaluation harness: answer parsing, scoring, per-task counts, the `eval` CLI — all with scripted fakes."""

from __future__ import annotations

import argparse
import json
import re
from decimal import Decimal

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fakes import NO_REQUIREMENTS, FakeExecution, ScriptedChatModel, plan_json
from hierplan import build_graph
from hierplan.eval import command as eval_cmd
from hierplan.errors import UsageError
from hierplan.eval import (last_number, load_tasks, numbers_equal, parse_gsm8k_answer, parse_number,
                           run_eval, score, summarize, task_metrics)
from hierplan.eval.report import render_summary

REQUIRED_KEYS = {"correct", "plan_source", "plan_valid_first_pass", "steps", "python_steps", "python_ok_first_try",
                 "python_ok", "generated_tokens", "seconds", "question", "expected", "predicted", "final",
                 "node_seconds", "error"}


# ---------------------------------------------------------------- parsing and scoring


@pytest.mark.parametrize("answer, expected", [
    ("She has 5 - 2 = <<5-2=3>>3 left\n#### 3", "3"),
    ("Total 1000 + 234 = 1234\n#### 1,234", "1234"),
    ("#### -15", "-15"),
    ("#### 2.50", "2.5"),
    ("#### 5.0", "5"),
    ("#### $18", "18"),
    ("first #### 1\nthen #### 2", "2"),          # the last marker wins
    ("42", "42"),                                  # a bare number is the answer itself
    (42, "42"),
    ("no marker and 3 numbers 1 2", None),
    ("#### ", None),
    (None, None),
])
def test_gsm8k_answer_is_the_number_after_the_marker(answer, expected):
    assert parse_gsm8k_answer(answer) == expected


@pytest.mark.parametrize("text, number", [
    ("The answer is 42.", "42"),
    ("It costs $1,234.50 in total.", "$1,234.50"),
    ("Step 1: 3 + 4 = 7. Step 2: 7 * 2 = 14", "14"),
    ("The temperature fell to -5 degrees", "-5"),
    ("between 3-4 apples", "4"),                   # a range, not minus four
    ("he lost $-5", "-$5"),
    ("50% of them", "50"),
    ("a ratio of .5", ".5"),
    ("1,2345", "2345"),                            # not a thousands separator
    ("no digits here", None),
    ("", None),
    (None, None),
])
def test_last_number_in_free_text(text, number):
    assert last_number(text) == number


@pytest.mark.parametrize("a, b, equal", [
    ("5.0", "5", True), ("$5", "5", True), ("1,234", "1234", True), ("-3", "-3.00", True),
    ("0.20", ".2", True), ("-$5", "-5", True), ("5", "-5", False), ("4.99", "5", False),
    (None, "5", False), ("five", "5", False),
])
def test_numbers_compare_by_value(a, b, equal):
    assert numbers_equal(a, b) is equal


def test_parse_number_rejects_non_numbers_and_score_reports_prediction():
    assert parse_number("1,234.5") == Decimal("1234.5") and parse_number("12abc") is None
    assert score("So Janet makes $18 every day.", "18") == ("$18", True)
    assert score("The total is 1,000 dollars, or 10 boxes", "1000") == ("10", False)  # the LAST number counts
    assert score("nothing numeric", "3") == (None, False)
    assert score("It is 7", None) == ("7", None)  # no answer to check against


def test_load_tasks_reads_jsonl_with_limit_and_clear_errors(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"question": "Q1", "answer": "x\\n#### 1,500"}\n\n{"question": " Q2 "}\n'
                    '{"question": "Q3", "answer": "#### 3"}\n')
    tasks = load_tasks(path)
    assert [(t.index, t.question, t.expected) for t in tasks] == [(1, "Q1", "1500"), (2, "Q2", None), (3, "Q3", "3")]
    assert [t.question for t in load_tasks(path, limit=2)] == ["Q1", "Q2"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok"}\n{not json\n')
    with pytest.raises(UsageError, match=r"bad.jsonl:2: not valid JSON"):
        load_tasks(bad)
    bad.write_text('{"answer": "#### 1"}\n')
    with pytest.raises(UsageError, match=r":1: missing or empty \"question\""):
        load_tasks(bad)
    with pytest.raises(UsageError, match="no tasks file"):
        load_tasks(tmp_path / "missing.jsonl")
    with pytest.raises(UsageError, match="--limit"):
        load_tasks(path, limit=0)


def test_the_shared_gsm8k_file_parses_when_present():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "gsm8k_dev100.jsonl"
    if not path.exists():
        pytest.skip("shared GSM8K file not on this machine")
    tasks = load_tasks(path)
    assert len(tasks) == 100 and all(t.expected is not None for t in tasks)


# ---------------------------------------------------------------- a fake model that knows the tasks


class CountingModel(ScriptedChatModel):
    """A scripted fake that reports token usage: one generated token per whitespace-separated word."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        result = super()._generate(messages, stop, run_manager, **kwargs)
        text = result.generations[0].message.content
        words = len(text.split())
        message = AIMessage(text, usage_metadata={"input_tokens": 1, "output_tokens": words,
                                                  "total_tokens": 1 + words})
        return ChatResult(generations=[ChatGeneration(message=message)])


def task_of(messages) -> str:
    """The task text, from the planner's or aggregator's user message."""
    return re.search(r"Task: (.*)", messages[-1].content).group(1)


# Per task: planner reply (garbage -> retry), python code on first try, final answer. Each task names parts
# ("steps", "plan"), so the planner plans it in a run with split_writing: without it, one piece of writing is
# planned by rule (rules.plan).
TASKS = [
    {"question": "Q1 repaired in steps", "answer": "1 + 41\n#### 42"},
    {"question": "Q2 retry plan", "answer": "#### 1,000"},
    {"question": "Q3 explodes in steps", "answer": "#### 3"},
    {"question": "Q4 wrong in steps", "answer": "#### 7"},
]
FINALS = {"Q1 repaired in steps": "The answer is 42.", "Q2 retry plan": "It costs $1,000.00",
          "Q4 wrong in steps": "I think 8", "Q3 explodes in steps": RuntimeError("model exploded")}


def planner(messages):
    task = task_of(messages)
    return "Sorry, I cannot make a plan." if task.startswith("Q2") else plan_json(["python", "llm", "llm"], goal=task)


def python_code(messages):
    if messages[-1].content.startswith("Task: Q1"):  # Q1's first try fails; its repair (an error report) works
        return "```python\nprint(1/0)\n```"
    return "print(42)"


def aggregator(messages):
    reply = FINALS[task_of(messages)]
    if isinstance(reply, BaseException):
        raise reply
    return reply


def make_model():
    return CountingModel(default={"planner": planner, "planner_retry": lambda m: plan_json(
        ["llm", "python", "python"], goal=task_of(m)), "python_step": python_code,
        "llm_step": "one two three", "aggregator": aggregator})


def fake_runner(code: str, before=()) -> FakeExecution:
    if "1/0" in code:
        return FakeExecution(False, "", "ZeroDivisionError: division by zero", "error")
    return FakeExecution(True, "42\n")


def tasks_file(tmp_path, tasks=TASKS):
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


# ---------------------------------------------------------------- the harness


def test_harness_counts_plan_paths_python_repairs_tokens_and_errors(tmp_path):
    model = make_model()
    graph = build_graph(model, run_code=fake_runner, constrain=False, split_writing=True)
    seen = []
    records = run_eval(graph, load_tasks(tasks_file(tmp_path)), thread_prefix="t",
                       on_result=lambda r, i, n: seen.append((i, n)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    q1, q2, q3, q4 = records
    assert [r["thread_id"] for r in records] == ["t-1", "t-2", "t-3", "t-4"]

    # Q1: model plan on first pass; its python step fails, then the repair runs.
    assert (q1["correct"], q1["predicted"], q1["expected"]) == (True, "42", "42")
    assert (q1["plan_source"], q1["plan_valid_first_pass"], q1["steps"]) == ("model", True, 3)
    assert (q1["python_steps"], q1["python_ok_first_try"], q1["python_ok"], q1["python_attempts"]) == (1, 0, 1, 2)
    # tokens: the requirements read + planner + 2 code attempts + 2 llm steps (3 words each) + aggregator, from
    # state and results
    read_words = len(NO_REQUIREMENTS.split())
    plan_words = len(plan_json(["python", "llm", "llm"], goal="Q1 repaired in steps").split())
    code_words = len("```python\nprint(1/0)\n```".split()) + len("print(42)".split())
    assert q1["generated_tokens"] == read_words + plan_words + code_words + 2 * 3 + len("The answer is 42.".split())
    assert q1["node_tokens"]["llm_step"] == 6 and q1["model_calls"] == 7
    assert q1["node_tokens"]["read_requirements"] == read_words
    assert set(q1["node_seconds"]) >= {"read_requirements", "planner", "llm_step", "python_step", "aggregator"}
    assert q1["error"] is None and q1["final"] == "The answer is 42."

    # Q2: the first plan did not parse; the retry's plan has two python steps, both fine first time.
    assert (q2["plan_source"], q2["plan_valid_first_pass"], q2["plan_failures"]) == ("retry", False, 1)
    assert len(q2["plan_errors"]) == 1 and q2["plan_errors"][0].startswith("model: ") and q1["plan_errors"] == []
    assert (q2["python_steps"], q2["python_ok_first_try"], q2["python_ok"]) == (2, 2, 2)
    assert q1["python_errors"] == ["ZeroDivisionError: division by zero"] and q2["python_errors"] == []
    assert q2["correct"] is True and q2["predicted"] == "$1,000.00"

    # Q3: the aggregator's model call raised: recorded with what finished; the run went on.
    assert q3["error"] == "RuntimeError: model exploded" and q3["final"] is None
    assert q3["correct"] is False and q3["predicted"] is None
    assert (q3["plan_source"], q3["steps"], q3["steps_done"], q3["python_ok"]) == ("model", 3, 3, 1)

    assert (q4["correct"], q4["predicted"]) == (False, "8")

    totals = summarize(records)
    assert (totals["tasks"], totals["errors"], totals["correct"], totals["checked"]) == (4, 1, 2, 4)
    assert totals["accuracy_pct"] == 50.0 and totals["plan_valid_first_pass_pct"] == 75.0
    assert totals["plan_sources"] == {"model": 3, "retry": 1}
    assert (totals["python_steps"], totals["python_ok_first_try"], totals["python_ok"]) == (5, 4, 5)
    assert totals["python_ok_pct"] == 100.0 and totals["python_ok_first_try_pct"] == 80.0


def test_checked_answers_and_changed_numbers_are_counted():
    state = {"task": "How many pens?", "plan": {"steps": []}, "results": [
        {"step_id": 1, "tool": "python", "ok": True, "attempts": [{"ok": True}]},
        {"step_id": 2, "tool": "python", "ok": True, "attempts": [{"ok": True}],
         "check": {"kind": "vote", "answers": ["5", "6", "6"], "chosen": "6", "agreed": 2, "programs": 3,
                   "changed": True}},
    ]}
    metrics = task_metrics(state)
    assert (metrics["checks"], metrics["checks_changed"]) == (1, 1)
    totals = summarize([metrics, {**metrics, "checks_changed": 0}])
    assert (totals["checks"], totals["checks_changed"]) == (2, 1)
    assert "| computed answers checked by whole-task programs (number changed by the vote) | 2 (1) |" in \
        render_summary(totals)

def test_metrics_of_an_empty_state_and_a_summary_without_answers():
    metrics = task_metrics({})
    assert metrics["plan_source"] is None and metrics["plan_valid_first_pass"] is None
    assert metrics["steps"] == 0 and metrics["generated_tokens"] == 0
    record = {"correct": None, "plan_source": "constrained", "plan_valid_first_pass": True, "seconds": 2.0,
              "python_steps_run": 0, "generated_tokens": 10}
    totals = summarize([record])
    assert totals["accuracy_pct"] is None and totals["python_ok_pct"] is None
    assert totals["plan_valid_first_pass_pct"] == 100.0
    md = render_summary(totals)
    assert "| accuracy | n/a (0/0) |" in md and "| plan sources | constrained 1 |" in md


def test_a_plan_by_rule_is_no_model_plan_valid_or_not():
    from hierplan.rules.plan import whole_task_plan

    task = "How many apples do 3 boxes of 14 apples hold?"
    metrics = task_metrics({"task": task, "plan": whole_task_plan(task), "plan_source": "rule"})
    assert metrics["plan_source"] == "rule" and metrics["plan_valid_first_pass"] is None
    model_plan = {"correct": True, "plan_source": "retry", "plan_valid_first_pass": False, "seconds": 1.0}
    totals = summarize([{**model_plan, "plan_source": "rule", "plan_valid_first_pass": None}, model_plan])
    assert totals["plan_valid_first_pass_pct"] == 0.0  # of the one model plan, not of both runs
    assert "| plan sources | rule 1, retry 1 |" in render_summary(totals)


# ---------------------------------------------------------------- the CLI


@pytest.fixture
def loads(monkeypatch):
    """Every model load returns a fresh make_model(); the list records each load."""
    made = []

    def fake_load(model=None, **kwargs):
        made.append(make_model())
        return made[-1]

    import hierplan.models

    monkeypatch.setattr(hierplan.models, "load_chat_model", fake_load, raising=False)
    return made


def cli(argv: list[str]) -> int:
    """`hierplan eval --split-writing ARGV...`: the planner plans TASKS, which name parts."""
    parser = argparse.ArgumentParser(prog="hierplan")
    eval_cmd.add_parser(parser.add_subparsers(required=True))
    args = parser.parse_args(["eval", "--split-writing", *argv])
    return args.func(args)


def read_results(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_cli_writes_results_and_summary_and_goes_on_after_an_error(loads, tmp_path, capsys):
    out = tmp_path / "out"
    # The CLI uses the real sandbox: print(1/0) really fails, and the repair really prints 42.
    assert cli([str(tasks_file(tmp_path)), "--out", str(out)]) == 0
    assert len(loads) == 1  # the model is loaded once for all tasks
    rows = read_results(out)
    assert [r["question"] for r in rows] == [t["question"] for t in TASKS]
    for row in rows:
        assert REQUIRED_KEYS <= row.keys()
    assert [r["correct"] for r in rows] == [True, True, False, False]
    assert [r["plan_source"] for r in rows] == ["model", "retry", "model", "model"]
    assert [r["plan_valid_first_pass"] for r in rows] == [True, False, True, True]
    assert (rows[0]["python_ok_first_try"], rows[0]["python_ok"]) == (0, 1)
    assert len(rows[0]["python_errors"]) == 1 and "ZeroDivisionError" in rows[0]["python_errors"][0]
    assert rows[2]["error"] == "RuntimeError: model exploded"
    assert all(r["generated_tokens"] > 0 and r["seconds"] >= 0 for r in rows)

    summary = (out / "summary.md").read_text()
    assert "| accuracy | 50.0% (2/4), 95% Wilson interval 15.0-85.0% |" in summary
    assert "| plan valid on first pass | 75.0% |" in summary
    assert "| plan sources | model 3, retry 1 |" in summary
    assert "| python ok first try | 80.0% (4/5) |" in summary and "| python ok after repair | 100.0% (5/5) |" in summary
    assert "1 failed with an error" in summary
    assert json.loads((out / "summary.json").read_text())["summary"]["correct"] == 2

    captured = capsys.readouterr()
    progress = [line for line in captured.err.splitlines() if line.startswith("[")]
    assert len(progress) == 4 and progress[0].startswith("[1/4] correct (42 = 42)")
    assert progress[2].startswith("[3/4] error: RuntimeError: model exploded")
    assert progress[3].startswith("[4/4] wrong (8, expected 7)")
    assert re.search(r" \d+\.\ds$", progress[0])
    assert "| accuracy | 50.0% (2/4), 95% Wilson interval 15.0-85.0% |" in captured.out


def test_cli_limit_json_and_db_threads(loads, tmp_path, capsys):
    out, db = tmp_path / "o", tmp_path / "eval.sqlite"
    assert cli([str(tasks_file(tmp_path)), "--limit", "2", "--out", str(out), "--db", str(db), "--json",
                "--no-constrain"]) == 0
    rows = read_results(out)
    assert [r["question"] for r in rows] == ["Q1 repaired in steps", "Q2 retry plan"]
    totals = json.loads(capsys.readouterr().out)
    assert totals["tasks"] == 2 and totals["correct"] == 2 and totals["accuracy_pct"] == 100.0
    # each task ran in its own thread of the --db checkpointer
    from hierplan.store import open_checkpointer

    threads = {c.config["configurable"]["thread_id"] for c in open_checkpointer(str(db)).list(None)}
    assert threads == {r["thread_id"] for r in rows} and len(threads) == 2


def test_cli_default_out_is_timestamped_under_eval_out(loads, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tasks = tasks_file(tmp_path, [{"question": "Q4 wrong in steps"}])  # no answer: correct is null
    assert cli([str(tasks)]) == 0
    [folder] = list((tmp_path / "eval-out").iterdir())
    assert re.fullmatch(r"\d{8}-\d{6}", folder.name)
    [row] = read_results(folder)
    assert row["correct"] is None and row["expected"] is None and row["predicted"] == "8"


def test_cli_bad_tasks_file_is_a_usage_error_before_loading_the_model(loads, tmp_path):
    with pytest.raises(UsageError, match="no tasks file"):
        cli([str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")])
    assert loads == []


def test_cli_module_imports_no_torch():
    import subprocess
    import sys

    code = ("import sys, hierplan.eval.command, hierplan.eval; "
            "print([m for m in ('torch', 'transformers') if m in sys.modules])")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


def test_report_module_rewrites_the_summary_from_results_jsonl(loads, tmp_path, capsys):
    from hierplan.eval import report

    out = tmp_path / "o"
    assert cli([str(tasks_file(tmp_path)), "--limit", "3", "--out", str(out)]) == 0
    (out / "summary.md").unlink()
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text(lines[0] + "\n")  # as if killed after the first task
    capsys.readouterr()
    assert report.main([str(out)]) == 0
    md = (out / "summary.md").read_text()
    assert "| accuracy | 100.0% (1/1), 95% Wilson interval 20.7-100.0% |" in md and "- constrain: True" in md
    assert report.main([]) == 2


def test_batched_llm_steps_count_their_pass_once_in_node_seconds():
    batch = [{"node": "llm_step", "generated_tokens": 5, "seconds": 6.0, "batch": 3}]
    state = {
        "calls": [{"node": "planner", "generated_tokens": 10, "seconds": 2.0},
                  {"node": "aggregator", "generated_tokens": 4, "seconds": 1.0}],
        "results": [*({"step_id": i, "tool": "llm", "ok": True, "seconds": 6.0, "calls": batch} for i in (1, 2, 3)),
                    {"step_id": 4, "tool": "python", "ok": True, "seconds": 1.5,
                     "attempts": [{"ok": False}, {"ok": True}],
                     "calls": [{"node": "python_step", "generated_tokens": 7, "seconds": 0.5}] * 2}],
    }
    metrics = task_metrics(state)
    assert metrics["node_seconds"] == {"planner": 2.0, "llm_step": 6.0, "python_step": 1.5, "aggregator": 1.0}
    assert metrics["generated_tokens"] == 10 + 4 + 3 * 5 + 2 * 7  # every prompt's own generated tokens
    assert metrics["node_tokens"] == {"planner": 10, "llm_step": 15, "python_step": 14, "aggregator": 4}


def test_parallel_steps_run_in_the_harness_and_sequential_flag_reaches_the_graph(loads, tmp_path, monkeypatch):
    import hierplan.graph.builder as builder

    seen = []
    real = builder.build_graph
    monkeypatch.setattr(builder, "build_graph", lambda *a, **k: seen.append(k["options"].parallel) or real(*a, **k))
    for extra in ([], ["--sequential"]):
        assert cli([str(tasks_file(tmp_path, TASKS[:1])), "--out", str(tmp_path / f"o{len(extra)}"), *extra]) == 0
        [row] = read_results(tmp_path / f"o{len(extra)}")
        assert row["correct"] is True and row["steps_done"] == 3
    assert seen == [True, False]


def test_wilson_interval_matches_known_values_and_stays_in_range():
    from hierplan.eval.report import wilson_interval

    assert wilson_interval(1, 40) == (0.4, 12.9)   # 1/40: 0.44%..12.88%
    assert wilson_interval(0, 20) == (0.0, 16.1)   # never negative at 0 successes
    assert wilson_interval(20, 20) == (83.9, 100.0)
    assert wilson_interval(0, 0) is None


def test_summary_counts_tasks_with_python_and_answer_checks():
    records = [
        {"correct": True, "has_python_step": True, "numeric_task": True, "python_steps_run": 2, "python_ok": 2,
         "answer_check": {"ok": True}, "seconds": 1.0},
        {"correct": False, "has_python_step": True, "numeric_task": True, "python_steps_run": 1, "python_ok": 0,
         "answer_check": {"ok": False}, "seconds": 1.0},
        {"correct": False, "has_python_step": False, "numeric_task": True, "seconds": 1.0},
        {"correct": None, "has_python_step": False, "numeric_task": False, "seconds": 1.0},
    ]
    totals = summarize(records)
    assert (totals["tasks_with_python"], totals["tasks_with_python_pct"], totals["numeric_tasks"]) == (2, 50.0, 3)
    assert (totals["answer_checks"], totals["answer_check_contradictions"]) == (2, 1)
    assert totals["accuracy_ci95_pct"] == (6.1, 79.2) and totals["python_ok_pct"] == 66.7
    md = render_summary(totals)
    assert "| tasks with at least one Python step | 50.0% (2/4; 3 ask for a quantity) |" in md
    assert "95% Wilson interval 6.1-79.2%" in md and "| answer contradicts the last computation | 1 of 2" in md


def test_task_metrics_read_the_task_kind_python_and_the_check():
    state = {"task": "A pen costs $2. How much do 3 pens cost?", "answer_check": {"ok": False},
             "plan": {"steps": [{"tool": "python"}, {"tool": "llm"}]}, "results": []}
    m = task_metrics(state)
    assert (m["numeric_task"], m["has_python_step"], m["answer_check"]) == (True, True, {"ok": False})
    m = task_metrics({"task": "Write a 3-line poem.", "plan": {"steps": [{"tool": "llm"}]}})
    assert (m["numeric_task"], m["has_python_step"], m["answer_check"]) == (False, False, None)


def test_calls_that_ended_at_the_budget_are_counted():
    state = {"task": "Write a poem.", "plan": {"steps": [{"tool": "llm"}, {"tool": "llm"}]},
             "calls": [{"node": "planner", "finish_reason": "stop"}, {"node": "aggregator", "finish_reason": "repetition"}],
             "results": [{"tool": "llm", "calls": [{"node": "llm_step", "finish_reason": "length"}]},
                         {"tool": "llm", "calls": [{"node": "llm_step"}]}]}  # a model that gave no reason
    m = task_metrics(state)
    assert (m["model_calls"], m["calls_at_budget"]) == (4, 1)
    md = render_summary(summarize([m, m]))
    assert "| model calls (ended at the token budget) | 8 (2) |" in md


def test_named_answers_are_scored_by_name_and_a_task_only_when_all_are_right(tmp_path):
    from hierplan.eval.harness import evaluate_task
    from hierplan.eval.report import render_summary, summarize
    from hierplan.eval.scoring import score_named
    from hierplan.eval.tasks import load_tasks

    assert score_named("@mean[34.650000001] and @city[Oslo]", [("mean", "34.65"), ("city", "Oslo")])[1:] == (True, 2)
    assert score_named("@mean[34.6], @city[Oslo]", [("mean", "34.65"), ("city", "Oslo")])[1:] == (False, 1)
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"question": "q1", "answers": [["a", "1"], ["b", "x"]]}) + "\n"
                    + json.dumps({"question": "q2", "answers": [["a", "2.5"]]}) + "\n")
    tasks = load_tasks(path)
    assert tasks[0].named == (("a", "1"), ("b", "x")) and tasks[0].expected_answer == "@a[1]; @b[x]"

    class Graph:
        def __init__(self, final):
            self.final = final

        def invoke(self, *args, **kwargs):
            return {"final": self.final}

    first = evaluate_task(Graph("@a[1.0000000001] @b[x]"), tasks[0], "t1")
    second = evaluate_task(Graph("@a[2.4]"), tasks[1], "t2")
    assert (first["correct"], first["sub_right"], second["correct"], second["sub_right"]) == (True, 2, False, 0)
    s = summarize([first, second])
    assert (s["correct"], s["sub_answers_right"], s["sub_answers"]) == (1, 2, 3)
    assert "named answers right" in render_summary(s)


def test_a_task_gives_one_kind_of_answer(tmp_path):
    from hierplan.errors import UsageError
    from hierplan.eval.tasks import load_tasks

    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"question": "q", "answer": "3", "answers": [["a", "3"]]}) + "\n")
    with pytest.raises(UsageError, match="give one of"):
        load_tasks(path)
    path.write_text(json.dumps({"question": "q", "answers": [["a", 3]]}) + "\n")
    with pytest.raises(UsageError, match="pairs of strings"):
        load_tasks(path)
