"""`show --history` lists checkpoints; `fork --at` starts a new run from one of them (time travel)."""

from __future__ import annotations

import json

from fakes import plan_json
from hierplan.cli.main import main

TASK = "Draft a plan"  # a deliverable with parts: the planner plans it with --split-writing (rules.plan)


def test_history_then_fork_from_after_step_one(models, tmp_path, capsys):
    scripts, made = models
    db = str(tmp_path / "h.sqlite")
    scripts.append({"planner": [plan_json(["llm", "llm", "llm"])], "llm_step": ["one", "two", "three"],
                    "aggregator": ["original final"]})
    assert main(["run", TASK, "--split-writing", "--db", db, "--run-id", "orig"]) == 0
    capsys.readouterr()
    assert main(["show", "orig", "--history", "--json", "--db", db]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["final"] and rows[-1]["source"] == "input"
    assert [r["step"] for r in rows] == sorted((r["step"] for r in rows), reverse=True)
    after_one = next(r for r in reversed(rows) if r["results"] == 1)

    scripts.append({"llm_step": ["TWO", "THREE"], "aggregator": ["forked final"]})
    assert main(["fork", "orig", "--at", after_one["checkpoint"], "--db", db, "--run-id", "fork1"]) == 0
    assert "forked final" in capsys.readouterr().out
    assert [c["node"] for c in made[1].calls] == ["llm_step", "llm_step", "aggregator"]  # step 1 kept
    capsys.readouterr()
    main(["show", "fork1", "--json", "--db", db])
    state = json.loads(capsys.readouterr().out)["state"]
    assert [r["output"] for r in state["results"]] == ["one", "TWO", "THREE"]
    main(["show", "orig", "--json", "--db", db])
    assert json.loads(capsys.readouterr().out)["state"]["final"] == "original final"  # the original is untouched


def test_fork_at_an_unknown_checkpoint_is_a_usage_error(models, tmp_path, capsys):
    scripts, _ = models
    db = str(tmp_path / "h.sqlite")
    scripts.append({"planner": [plan_json(["llm"] * 3)]})
    main(["run", TASK, "--split-writing", "--db", db, "--run-id", "o2"])
    capsys.readouterr()
    assert main(["fork", "o2", "--at", "nope", "--db", db]) == 2
    assert "no checkpoint 'nope'" in capsys.readouterr().err
