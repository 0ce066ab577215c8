"""The CLI in-process: every command, --json events, and clean error exits."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from fakes import plan_json
from hierplan.cli.main import main
from hierplan.cli.run_cmd import DEMO_TASK

LIVE_EVENTS = {"planning", "steps_started", "code_attempt", "node_started", "final_token"}


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "cli.sqlite")


def three_llm_steps(**extra):
    return {"planner": [plan_json(["llm", "python", "llm"])], "python_step": ["print(6 * 7)"],
            "llm_step": ["first answer", "third answer"], "aggregator": ["THE FINAL ANSWER"], **extra}


def run_ids(db, capsys):
    capsys.readouterr()
    assert main(["runs", "--json", "--db", db]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_prints_plan_steps_and_final(models, db, capsys):
    models[0].append(three_llm_steps())
    assert main(["run", "Compute 6 times 7", "--db", db, "--run-id", "p1"]) == 0  # a random id may hold "42"
    out = capsys.readouterr().out
    for text in ("Plan (model)", "Goal: Do the task", "first answer", "print(6 * 7)", "42", "THE FINAL ANSWER"):
        assert text in out
    assert out.index("Plan (model)") < out.index("first answer") < out.index("42") < out.index("THE FINAL")
    [run] = run_ids(db, capsys)
    assert run["status"] == "done" and run["task"] == "Compute 6 times 7"
    assert set(run) >= {"id", "status", "task", "started"}


def test_run_json_emits_one_event_per_line(models, db, capsys):
    models[0].append(three_llm_steps())
    assert main(["run", "Compute", "--json", "--db", db, "--run-id", "j1"]) == 0
    every = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    live = [e for e in every if e["event"] in LIVE_EVENTS]
    events = [e for e in every if e["event"] not in LIVE_EVENTS]
    assert events[0] == {"event": "run_started", "run_id": "j1", "task": "Compute", "resumed": False}
    assert [e["event"] for e in events[1:]] == ["plan", "step_finished", "step_finished", "step_finished",
                                                "final", "run_finished"]
    # live progress as it happens: planning, each step starting, the code attempt, the answer streamed
    assert [e["event"] for e in live if e["event"] != "final_token"] == [
        "planning", "steps_started", "steps_started", "code_attempt", "steps_started", "node_started"]
    assert "".join(e["text"] for e in live if e["event"] == "final_token") == "THE FINAL ANSWER"
    assert every.index(live[-1]) < every.index(events[-2])  # streamed before the final event
    assert events[-1]["status"] == "done" and events[-1]["final"] == "THE FINAL ANSWER"
    assert [e["step_id"] for e in events if e["event"] == "step_finished"] == [1, 2, 3]


def test_task_from_stdin_and_interactive_prompt(models, db, capsys, monkeypatch):
    models[0].extend([three_llm_steps(), three_llm_steps()])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("piped task\n".encode())))
    assert main(["run", "--db", db]) == 0
    monkeypatch.setattr(sys, "stdin", type("Tty", (), {"isatty": lambda self: True})())
    monkeypatch.setattr("builtins.input", lambda prompt: "typed task")
    assert main(["run", "--db", db]) == 0
    assert sorted(r["task"] for r in run_ids(db, capsys)) == ["piped task", "typed task"]


def test_demo_runs_the_logistics_checklist_task(models, db, capsys):
    models[0].append(three_llm_steps())
    assert main(["demo", "--db", db]) == 0
    planner_prompt = models[1][0].calls[0]["messages"][-1].content
    assert DEMO_TASK in planner_prompt and "logistics" in DEMO_TASK and "inventory" in DEMO_TASK


@pytest.mark.parametrize("argv, stdin, message", [
    (["run", "   "], None, "the task is empty"),
    (["run"], b"\xff\xfe bad bytes", "not valid UTF-8"),
    (["run", "x" * 20_001], None, "the limit is 20,000"),
    (["show", "nope"], None, "no run 'nope'"),
    (["resume", "nope"], None, "no run 'nope'"),
    (["show", "../etc/passwd"], None, "malformed run id"),
])
def test_usage_errors_exit_2_with_one_line(models, db, capsys, monkeypatch, argv, stdin, message):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    assert main(argv + ["--db", db]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_failed_run_is_resumed_without_redoing_steps(models, db, capsys):
    scripts, made = models
    scripts.append(three_llm_steps(llm_step=["first answer", RuntimeError("GPU on fire")]))
    assert main(["run", "Compute", "--db", db, "--run-id", "r1"]) == 1
    err = capsys.readouterr().err
    assert "GPU on fire" in err and "hierplan resume r1" in err and "Traceback" not in err
    assert run_ids(db, capsys)[0]["status"] == "failed"

    scripts.append({"llm_step": ["third answer"], "aggregator": ["resumed final"]})
    assert main(["resume", "r1", "--db", db]) == 0
    assert "resumed final" in capsys.readouterr().out
    assert [c["node"] for c in made[1].calls] == ["llm_step", "aggregator"]
    assert run_ids(db, capsys)[0]["status"] == "done"


def test_show_prints_plan_outputs_final_and_token_totals(models, db, capsys):
    models[0].append(three_llm_steps())
    main(["run", "Compute", "--db", db, "--run-id", "s1"])
    capsys.readouterr()
    assert main(["show", "s1", "--db", db]) == 0
    out = capsys.readouterr().out
    for text in ("Run s1 (done): Compute", "Plan (model)", "first answer", "42", "THE FINAL ANSWER", "total"):
        assert text in out
    assert main(["show", "s1", "--json", "--db", db]) == 0
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["final"] == "THE FINAL ANSWER" and len(state["results"]) == 3


def test_run_and_show_print_a_replan_the_same_way(models, db, capsys):
    """A failed step whose revision is unusable: the live output and `show` give the same block, with the reason."""
    models[0].append(three_llm_steps(python_step=[], replanner=["no revision here"]))  # default code: a SyntaxError
    assert main(["run", "Compute", "--db", db, "--run-id", "r1"]) == 0
    ran = capsys.readouterr().out
    assert main(["show", "r1", "--db", db]) == 0
    shown = capsys.readouterr().out

    def replan(out: str) -> str:  # the text under the replan's rule, up to the next rule
        block = out.split("Replan after step 2 failed", 1)[1].split("\n", 1)[1].split("───", 1)[0]
        return " ".join(block.split())

    assert replan(ran) == replan(shown)
    assert replan(ran).startswith("the model gave no usable revision (no JSON") and "goes on as it was" in replan(ran)


def test_runs_lists_nothing_yet(db, capsys):
    assert main(["runs", "--db", db]) == 0
    assert "no runs yet" in capsys.readouterr().out


def test_corrupt_database_is_one_clear_error(tmp_path, capsys):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    assert main(["runs", "--db", str(bad)]) == 1
    assert "cannot use database" in capsys.readouterr().err


def test_debug_shows_the_traceback(models, db):
    models[0].append(three_llm_steps(llm_step=[RuntimeError("boom")]))
    with pytest.raises(RuntimeError, match="boom"):
        main(["run", "Compute", "--db", db, "--debug"])


def test_graph_mermaid_and_ascii(capsys):
    assert main(["graph"]) == 0
    assert "scheduler -.-> python_step" in capsys.readouterr().out
    assert main(["graph", "--format", "ascii"]) == 0
    out = capsys.readouterr().out
    assert "| planner |" in out and "| scheduler |" in out and "| aggregator |" in out


def test_help_and_light_commands_do_not_import_torch(tmp_path):
    code = ("import sys; from hierplan.cli.main import main\n"
            "for argv in (['graph'], ['runs', '--db', sys.argv[1]]): main(argv)\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n"
            "assert 'transformers' not in sys.modules, 'transformers was imported'\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.sqlite")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "usage: hierplan" in proc.stdout


def test_graph_png_is_rendered_locally(tmp_path):
    pytest.importorskip("pygraphviz", reason="--png needs pygraphviz (.ci/run installs it)")
    target = tmp_path / "graph.png"
    assert main(["graph", "--png", str(target)]) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graph_png_without_pygraphviz_says_how_to_install(tmp_path, capsys, monkeypatch):
    import langchain_core.runnables.graph_png as graph_png

    monkeypatch.setattr(graph_png, "_HAS_PYGRAPHVIZ", False)  # as when pygraphviz is not installed
    assert main(["graph", "--png", str(tmp_path / "g.png")]) == 2
    assert "pip install pygraphviz" in capsys.readouterr().err


def test_options_given_on_resume_override_the_runs_even_when_zero():
    import argparse

    from hierplan.cli.options import add_model_options, overridden_options

    parser = argparse.ArgumentParser()
    add_model_options(parser)
    started = {"max_replans": 2, "temperature": 0.7, "seed": 5, "sequential": True, "model": "m"}
    given = parser.parse_args(["--max-replans", "0", "--temperature", "0", "--seed", "0"])
    assert overridden_options(started, given) == {**started, "max_replans": 0, "temperature": 0.0, "seed": 0}
    assert overridden_options(started, parser.parse_args([])) == started  # flags left off keep the run's
