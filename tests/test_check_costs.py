"""bench/check_costs.py's reading of a run: a run with fewer tie-breaks is the same run cut short."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
spec = importlib.util.spec_from_file_location("check_costs", ROOT / "bench" / "check_costs.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def hierplan(answers, expected, seconds, checks):
    calls = [{"node": "planner", "prompt_tokens": 500, "generated_tokens": 80, "seconds": 4.0},
             {"node": "python_step", "prompt_tokens": 450, "generated_tokens": 50, "seconds": 4.0}]
    calls += [{"node": "python_check", "prompt_tokens": 150, "generated_tokens": 120, "seconds": s} for s in checks]
    return {"system": "hierplan", "index": 1, "expected": expected, "answers": answers, "seconds": seconds,
            "correct": None, "calls": calls}


def test_a_tie_break_the_limit_forbids_is_cut_with_its_seconds_and_the_split_keeps_the_checks_number():
    # step 5, check 7, first tie-break 9 (a three-way split), second tie-break 5: 5 wins with two votes
    run = hierplan(["5", "7", "9", "5.0"], "5", 20.0, [3.0, 2.0, 1.5])
    assert bench.with_tie_breaks(run, 2) == (True, 20.0)
    assert bench.with_tie_breaks(run, 1) == (False, 18.5)  # the split keeps the check's 7
    assert bench.with_tie_breaks(run, 0) == (False, 16.5)


def test_an_agreement_draws_no_tie_break_whatever_the_limit():
    run = hierplan(["12", "12.0"], "12", 11.0, [3.0])
    assert [bench.with_tie_breaks(run, k) for k in (0, 1, 2)] == [(True, 11.0)] * 3


def test_the_summary_pairs_each_limit_against_the_program():
    records = [hierplan(["5", "7", "9", "5.0"], "5", 20.0, [3.0, 2.0, 1.5]),
               {"system": "program", "index": 1, "correct": True, "seconds": 5.0}]
    table = bench.summary(records)
    assert "| 1 | 0/1 | 1/1 | 0 | 1 | 3.70x |" in table
    assert "| 2 | 1/1 | 1/1 | 0 | 0 | 4.00x |" in table
    assert "| python_check (tie-break) | 2 | 1.75 | 150 | 120 | 3.50 |" in table
