"""Human in the loop: the run waits after planning; approve, edit or reject resumes it."""

from __future__ import annotations

import json

from langgraph.types import Command

from fakes import ScriptedChatModel, plan_json
from helpers import events, statuses
from hierplan import build_graph
from hierplan.nodes.approval import REJECTED_FINAL

CONFIG = {"configurable": {"thread_id": "ap"}}


def waiting_graph():
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "llm", "llm"])]})
    # a piece of writing with parts, split_writing: the planner plans it (without, one piece by rule)
    graph = build_graph(model=model, constrain=False, approve=True, split_writing=True)
    out = graph.invoke({"task": "Draft a plan"}, CONFIG)
    return model, graph, out


def test_the_run_stops_after_planning_and_shows_the_plan():
    model, graph, out = waiting_graph()
    [pending] = out["__interrupt__"]
    assert pending.value["plan"]["steps"][0]["title"] == "Step 1 (llm)"
    assert [c["node"] for c in model.calls] == ["read_requirements", "planner"]
    assert graph.get_state(CONFIG).next == ("approval",)


def test_approve_runs_the_plan():
    model, graph, _ = waiting_graph()
    out = graph.invoke(Command(resume={"action": "approve"}), CONFIG)
    assert out["approval"] == "approved" and len(out["results"]) == 3 and out["final"]
    assert model.count("planner") == 1


def test_edit_replaces_the_plan_and_is_validated():
    model, graph, _ = waiting_graph()
    edited = json.loads(plan_json(["python", "llm", "none"], goal="Edited goal"))
    # invalid: step ids out of order
    shuffled = [edited["steps"][1], edited["steps"][0], edited["steps"][2]]
    waiting = graph.invoke(Command(resume={"action": "edit", "plan": {**edited, "steps": shuffled}}), CONFIG)
    [again] = waiting["__interrupt__"]  # an invalid edit asks again, with the reason
    assert "invalid" in again.value["error"] and model.count("llm_step") == 0
    out = graph.invoke(Command(resume={"action": "edit", "plan": edited}), CONFIG)
    assert out["plan"]["goal"] == "Edited goal" and out["plan_source"] == "edited"
    assert [r["tool"] for r in out["results"]] == ["python", "llm", "none"]


def test_reject_ends_the_run_without_running_steps():
    model, graph, _ = waiting_graph()
    out = graph.invoke(Command(resume={"action": "reject"}), CONFIG)
    assert out["final"] == REJECTED_FINAL and not out.get("results")
    assert [c["node"] for c in model.calls] == ["read_requirements", "planner"]


# --- the CLI: run --approve waits; resume --approve|--edit|--reject decides, from another invocation ---

from hierplan.cli.main import main  # noqa: E402


def test_cli_run_waits_and_resume_approves(models, tmp_path, capsys):
    db = str(tmp_path / "a.sqlite")
    models[0].append({"planner": [plan_json(["llm", "llm", "llm"])]})
    assert main(["run", "t", "--approve", "--json", "--db", db, "--run-id", "w1"]) == 0
    printed = [e for e in events(capsys.readouterr().out) if e["event"] not in ("planning", "kind", "node_started", "requirements")]  # live progress events
    assert [e["event"] for e in printed] == ["run_started", "plan", "approval_needed", "run_finished"]
    assert printed[-1]["status"] == "waiting"
    assert statuses(db) == {"w1": "waiting"}
    models[0].append({"aggregator": ["approved final"]})
    assert main(["resume", "w1", "--approve", "--db", db]) == 0
    assert "approved final" in capsys.readouterr().out
    assert statuses(db) == {"w1": "done"}


def test_cli_resume_edit_opens_the_editor_and_validates(models, tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "a.sqlite")
    models[0].append({"planner": [plan_json(["llm", "llm", "llm"])]})
    main(["run", "t", "--approve", "--db", db, "--run-id", "w2"])
    editor = tmp_path / "editor.py"
    new_plan = plan_json(["llm", "none", "llm", "llm"], goal="Edited by a person")
    editor.write_text(f"import sys; open(sys.argv[1], 'w').write({new_plan!r})")
    monkeypatch.setenv("EDITOR", f"python {editor}")
    models[0].append({})
    assert main(["resume", "w2", "--edit", "--db", db]) == 0
    capsys.readouterr()
    main(["show", "w2", "--json", "--db", db])
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["plan"]["goal"] == "Edited by a person" and len(state["results"]) == 4

    bad = tmp_path / "bad.py"
    bad.write_text("import sys; open(sys.argv[1], 'w').write('{\"goal\": \"x\"}')")
    monkeypatch.setenv("EDITOR", f"python {bad}")
    models[0].append({"planner": [plan_json(["llm", "llm", "llm"])]})
    main(["run", "t", "--approve", "--db", db, "--run-id", "w3"])
    capsys.readouterr()
    models[0].append({})
    assert main(["resume", "w3", "--edit", "--db", db]) == 2
    assert "the edited plan is invalid" in capsys.readouterr().err
    assert statuses(db)["w3"] == "waiting"  # nothing lost: it can still be approved


def test_cli_resume_reject(models, tmp_path, capsys):
    db = str(tmp_path / "a.sqlite")
    models[0].append({"planner": [plan_json(["llm", "llm", "llm"])]})
    main(["run", "t", "--approve", "--db", db, "--run-id", "w4"])
    models[0].append({})
    assert main(["resume", "w4", "--reject", "--db", db]) == 0
    assert REJECTED_FINAL in capsys.readouterr().out
