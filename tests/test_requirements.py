"""Writing-task requirements: each check on answers that meet and miss it, task loading, and the eval summary."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from fakes import ScriptedChatModel, plan_json
from hierplan.eval import command as eval_cmd
from hierplan.errors import UsageError
from hierplan.eval.report import render_summary, summarize
from hierplan.eval.requirements import CHECKS, check, requirement_fields, validate, words
from hierplan.eval.tasks import load_tasks

WRITING20 = Path(__file__).resolve().parent.parent / "hierplan" / "eval" / "data" / "writing20.jsonl"

CHECKLIST = """Here is your checklist:

- Check the inventory levels
- Confirm routing for each van
  - including the detours
* Load the vans
\u2022 Brief the drivers
+ Sign the dispatch log

**Done** when all are ticked.
---
"""

PROGRAM = """Here it is:

```python
# not a heading
def add(a, b):
    '''Add two numbers.
- not a bullet
    '''
    return a + b
```
"""


def met(spec, text):
    return check(spec, text).met


# ---------------------------------------------------------------- counted kinds


def test_bullets_count_top_level_markers_only():
    # five top-level items of four marker kinds; the sub-item, the bold line and the rule are not bullets
    assert met({"kind": "bullets", "exactly": 5}, CHECKLIST)
    result = check({"kind": "bullets", "exactly": 4}, CHECKLIST)
    assert not result.met and result.reason == "5 bullet points (wanted exactly 4)"
    assert met({"kind": "bullets", "min": 2, "max": 5}, CHECKLIST)
    assert not met({"kind": "bullets", "max": 4}, CHECKLIST)


def test_bullets_ignore_code_and_numbered_items_unless_asked():
    assert not met({"kind": "bullets", "min": 1}, PROGRAM)  # "- not a bullet" is inside the code block
    numbered = "1. first\n2. second\n3) third"
    assert check({"kind": "bullets", "exactly": 3}, numbered).reason == \
        "0 bullet points (wanted exactly 3); 3 numbered items not counted"
    assert met({"kind": "bullets", "markers": "any", "exactly": 3}, numbered)
    assert met({"kind": "bullets", "markers": "any", "exactly": 4}, numbered + "\n- fourth")


def test_bullets_indented_as_a_whole_still_count():
    assert met({"kind": "bullets", "exactly": 2}, "  - one\n  - two\n      - sub")


def test_numbered_steps_accept_dot_paren_and_step_forms():
    text = "Steps:\n1. Unplug it\n2) Wait\nStep 3: Plug it in\n   a. not counted\n10. Done"
    assert met({"kind": "numbered_steps", "exactly": 4}, text)
    assert not met({"kind": "numbered_steps", "exactly": 3}, text)
    assert not met({"kind": "numbered_steps", "min": 1}, "- a bullet\n2024 was a year")  # no "2024." form
    assert check({"kind": "numbered_steps", "min": 4, "max": 7}, "1. a\n2. b").reason == \
        "2 numbered steps (wanted at least 4, at most 7)"


def test_heading_count_reads_markdown_headings_outside_code():
    text = "# Plan\n\n## Goals\ntext\n#hashtag\n" + PROGRAM
    assert met({"kind": "heading_count", "exactly": 2}, text)
    assert not met({"kind": "heading_count", "exactly": 3}, text)
    assert not met({"kind": "heading_count", "min": 1}, "No headings, just **bold**.")


# ---------------------------------------------------------------- words


def test_mentions_whole_words_case_plural_and_phrases():
    text = "The Planner hands routes to executors; first-aid kits are packed."
    assert met({"kind": "mentions", "all": ["planner", "executor", "route", "first aid"]}, text)
    result = check({"kind": "mentions", "all": ["planner", "aggregator", "plan"]}, text)
    assert not result.met and result.reason == "missing 'aggregator', 'plan'"  # "Planner" is not "plan"
    assert met({"kind": "mentions", "any": ["cache", "routes"]}, text)
    assert not met({"kind": "mentions", "any": ["cache", "reinstall"]}, text)


def test_no_word_finds_forbidden_words_not_substrings():
    assert met({"kind": "no_word", "words": ["very", "simply"]}, "Every step is simple.")
    result = check({"kind": "no_word", "words": ["very", "B-tree"]}, "It is Very fast, like a b-tree.")
    assert not result.met and result.reason == "uses 'very', 'B-tree'"


def test_word_limits_count_prose_outside_code():
    assert words("Don't stop: long-term plans, 3 steps.") == ["Don't", "stop", "long-term", "plans", "3", "steps"]
    assert len(words(PROGRAM)) == 3  # "Here it is" — the program is not counted
    assert met({"kind": "max_words", "n": 3}, PROGRAM)
    assert not met({"kind": "max_words", "n": 2}, PROGRAM)
    assert met({"kind": "min_words", "n": 6}, "one two three four five six")
    result = check({"kind": "min_words", "n": 60}, "too short")
    assert not result.met and result.reason == "2 words outside code (at least 60)"


# ---------------------------------------------------------------- code and shape


def test_python_block_parses_needs_a_block_that_parses():
    assert met({"kind": "python_block_parses"}, PROGRAM)
    assert met({"kind": "python_block_parses"}, "```\nx = 1\n```")  # an unlabeled block counts
    assert not met({"kind": "python_block_parses"}, "def f():\n    return 1")  # no block at all
    broken = check({"kind": "python_block_parses"}, "```python\ndef f(:\n    pass\n```")
    assert not broken.met and broken.reason.startswith("block 1 does not parse")
    assert not met({"kind": "python_block_parses"}, "```json\n{\"a\": 1}\n```")  # not a Python block
    assert met({"kind": "python_block_parses"}, "```python\nprint(1)\n")  # cut at the budget, still parses


def test_ends_with_question_reads_the_last_prose_line():
    assert met({"kind": "ends_with_question"}, "Thanks.\n\nDoes the new date work for you?\n")
    assert met({"kind": "ends_with_question"}, "Does it work for you?**")  # emphasis around it is ignored
    assert not met({"kind": "ends_with_question"}, "Is this ok? Thanks.")
    assert not met({"kind": "ends_with_question"}, "What now?\n```python\nx = 1\n```\nBye.")


def test_starts_with_reads_the_first_prose_line():
    assert met({"kind": "starts_with", "text": "Subject:"}, "\n**Subject: Your order**\n\nDear Ana,")
    assert not met({"kind": "starts_with", "text": "Subject:"}, "Dear Ana,\nSubject: late")


def test_no_answer_meets_nothing_and_every_kind_is_checked():
    for kind in CHECKS:
        assert check({"kind": kind, "exactly": 1, "n": 1, "all": ["x"], "words": ["x"], "text": "x"}, None).met is False
    assert requirement_fields((), "anything") == {}
    fields = requirement_fields(({"kind": "max_words", "n": 5}, {"kind": "ends_with_question"}), "Short?")
    assert (fields["requirements_met"], fields["requirements_total"]) == (2, 2)
    assert fields["requirements"][0] == {"kind": "max_words", "met": True, "reason": "1 words outside code (at most 5)"}


@pytest.mark.parametrize("spec", [{"kind": "bulets", "exactly": 5}, {"kind": "bullets"}, {"kind": "max_words"},
                                  {"kind": "mentions"}, {"kind": "no_word", "words": []}, "bullets",
                                  {"kind": "starts_with", "text": " "}])
def test_malformed_requirements_are_named(spec):
    assert validate(spec)


# ---------------------------------------------------------------- tasks, summary, CLI


def test_writing20_loads_with_two_to_four_valid_requirements_each():
    tasks = load_tasks(WRITING20)
    assert len(tasks) == 20
    assert all(2 <= len(t.requirements) <= 4 and t.expected is None for t in tasks)
    assert {spec["kind"] for t in tasks for spec in t.requirements} == set(CHECKS)


def test_a_malformed_requirement_is_a_usage_error_with_its_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"question": "ok"}\n{"question": "Write", "requirements": [{"kind": "bullets"}]}\n')
    with pytest.raises(UsageError, match=r"t.jsonl:2: bullets needs"):
        load_tasks(path)


def test_summary_reports_the_share_of_requirements_met_and_python_steps():
    records = [{"requirements_met": 2, "requirements_total": 3, "has_python_step": False},
               {"requirements_met": 3, "requirements_total": 3, "has_python_step": True},
               {"correct": True}]
    s = summarize(records)
    assert (s["requirement_tasks"], s["requirements_met"], s["requirements_total"]) == (2, 5, 6)
    assert s["requirements_met_pct"] == 83.3 and s["requirement_tasks_all_met"] == 1
    assert s["requirement_tasks_with_python_pct"] == 50.0
    text = render_summary(s)
    assert "| requirements met (writing tasks) | 83.3% (5/6; all met in 1/2 tasks) |" in text
    assert "| writing tasks with a Python step | 50.0% (1/2) |" in text
    assert "requirements met" not in render_summary(summarize([{"correct": True}]))


def test_eval_cli_scores_writing_tasks(monkeypatch, tmp_path, capsys):
    answer = "- inventory\n- routing\n- vans"
    model = ScriptedChatModel(default={"planner": plan_json(["llm"]), "llm_step": "notes",
                                       "aggregator": answer})
    import hierplan.models

    monkeypatch.setattr(hierplan.models, "load_chat_model", lambda spec=None, **kw: model, raising=False)
    tasks = tmp_path / "w.jsonl"
    tasks.write_text(json.dumps({"question": "Write a dispatch checklist.", "requirements": [
        {"kind": "bullets", "exactly": 3}, {"kind": "mentions", "all": ["inventory", "routing", "drivers"]}]}) + "\n")
    parser = argparse.ArgumentParser(prog="hierplan")
    eval_cmd.add_parser(parser.add_subparsers(required=True))
    args = parser.parse_args(["eval", str(tasks), "--out", str(tmp_path / "out"), "--no-constrain"])
    assert args.func(args) == 0
    row = json.loads((tmp_path / "out" / "results.jsonl").read_text())
    assert (row["requirements_met"], row["requirements_total"]) == (1, 2)
    assert row["requirements"][1] == {"kind": "mentions", "met": False, "reason": "missing 'drivers'"}
    assert "| requirements met (writing tasks) | 50.0% (1/2; all met in 0/1 tasks) |" in \
        (tmp_path / "out" / "summary.md").read_text()
    assert "requirements met 1/2" in capsys.readouterr().err
