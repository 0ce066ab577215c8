"""The CLI in-process: every command, --json events, and clean error exits."""

from __future__ import annotations

import io
import json
import subprocess
import time
import xml.etree.ElementTree as ET
import sys

import pytest

from fakes import answer_token, plan_json
from hierplan.cli.main import main
from hierplan.cli.run_cmd import DEMO_TASK

LIVE_EVENTS = {"planning", "kind", "steps_started", "code_attempt", "step_check", "node_started", "token",
               "instruction_check", "requirements"}
# A writing task with parts (rules.plan PARTS_RE): the planner plans it where the run gives SPLIT (without it, a
# piece of writing with parts is one piece planned by rule)
TASK = "Compute it in steps"
SPLIT = "--split-writing"


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
    # --explain: the aggregator model writes the voted number's answer (a random id may hold "42")
    # two questions: the plan keeps its three steps (one question would be one program, rules.plan)
    assert main(["run", "What is 6 times 7? And 7 times 6?", "--db", db, "--run-id", "p1", "--explain"]) == 0
    out = capsys.readouterr().out
    for text in ("Plan (model)", "Goal: Do the task", "first answer", "print(6 * 7)", "42", "THE FINAL ANSWER"):
        assert text in out
    assert out.index("Plan (model)") < out.index("first answer") < out.index("42") < out.index("THE FINAL")
    [run] = run_ids(db, capsys)
    assert run["status"] == "done" and run["task"] == "What is 6 times 7? And 7 times 6?"
    assert set(run) >= {"id", "status", "task", "started"}


def test_a_question_asked_once_prints_its_plan_by_rule_and_the_stated_answer(models, db, capsys):
    task = "A box holds 6 rows of 7 eggs. How many eggs does it hold?"
    programs = {"python_step": ["```python\nprint(6 * 7)\n```"], "python_check": ["```python\nprint(42)\n```"]}
    models[0].append(dict(programs))
    assert main(["run", task, "--db", db, "--run-id", "r1"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "Plan (rule)" in out and "Goal: How many eggs does it hold?" in out
    assert "How many eggs does it hold? 42. Computed with Python: 2 of 2 independent programs printed it." in out
    models[0].append(dict(programs))
    assert main(["run", task, "--json", "--db", db, "--run-id", "r2"]) == 0
    [plan] = [e for e in map(json.loads, capsys.readouterr().out.splitlines()) if e["event"] == "plan"]
    assert plan["source"] == "rule" and plan["failures"] == 0


def test_run_json_emits_one_event_per_line(models, db, capsys):
    models[0].append(three_llm_steps())
    assert main(["run", TASK, SPLIT, "--json", "--db", db, "--run-id", "j1"]) == 0
    every = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    live = [e for e in every if e["event"] in LIVE_EVENTS]
    events = [e for e in every if e["event"] not in LIVE_EVENTS]
    assert events[0] == {"event": "run_started", "run_id": "j1", "task": TASK, "resumed": False, "model": None,
                         "kind": None}
    assert [e["event"] for e in events[1:]] == ["plan", "step_finished", "step_finished", "step_finished",
                                                "final", "run_finished"]
    # live progress as it happens: the task's kind, its requirements read, planning, each step starting, the
    # code attempt, the answer streamed, then checked against the task's instructions
    assert [e["event"] for e in live if e["event"] != "token"] == [
        "kind", "node_started", "requirements", "planning", "steps_started", "steps_started", "code_attempt",
        "steps_started", "node_started", "instruction_check"]
    assert live[0] == {"event": "kind", "kind": "writing", "given": False}
    assert live[1] == {"event": "node_started", "node": "read_requirements"}
    assert live[2]["requirements"] == []  # the task states none
    assert "".join(e["text"] for e in live if e["event"] == "token" and e["node"] == "aggregator") == "THE FINAL ANSWER"
    assert every.index(live[-1]) < every.index(events[-2])  # streamed before the final event
    assert events[-1]["status"] == "done" and events[-1]["final"] == "THE FINAL ANSWER"
    assert [e["step_id"] for e in events if e["event"] == "step_finished"] == [1, 2, 3]


def test_the_kind_given_decides_the_branch_and_is_shown_by_run_show_and_resume(models, db, capsys):
    scripts, made = models
    scripts.append(three_llm_steps(llm_step=["first answer", RuntimeError("stop here")]))
    assert main(["run", "Compute? And check?", "--kind", "numeric", "--json", "--db", db, "--run-id", "k1"]) == 1
    kinds = [e for e in map(json.loads, capsys.readouterr().out.splitlines()) if e["event"] == "kind"]
    assert kinds == [{"event": "kind", "kind": "numeric", "given": True}]  # "Compute" alone reads as writing
    assert main(["show", "k1", "--db", db]) == 0
    assert "kind: numeric" in capsys.readouterr().out
    scripts.append({"llm_step": ["third answer"], "aggregator": ["#### 42"]})
    assert main(["resume", "k1", "--json", "--db", db]) == 0
    started = json.loads(capsys.readouterr().out.splitlines()[0])
    assert started["event"] == "run_started" and started["kind"] == "numeric"
    with pytest.raises(SystemExit, match="2"):
        main(["run", "t", "--kind", "poetry", "--db", db])
    assert "invalid choice: 'poetry'" in capsys.readouterr().err


def test_task_from_stdin_and_interactive_prompt(models, db, capsys, monkeypatch):
    models[0].extend([three_llm_steps(), three_llm_steps()])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("piped task\n".encode())))
    assert main(["run", "--db", db]) == 0
    monkeypatch.setattr(sys, "stdin", type("Tty", (), {"isatty": lambda self: True})())
    monkeypatch.setattr("builtins.input", lambda prompt: "typed task")
    assert main(["run", "--db", db]) == 0
    assert sorted(r["task"] for r in run_ids(db, capsys)) == ["piped task", "typed task"]


def test_demo_runs_the_logistics_checklist_task(models, db, capsys):
    """The demo runs with the defaults: its checklist (a deliverable with parts) is one piece, planned by rule
    without a planner call (rules.plan rule 1b), and the final answer writes it."""
    checklist = ("- Write the planner agent\n- Write the routing and inventory executor agents\n"
                 "- Keep past decisions in a memory store\n- Run it all in Colab")
    models[0].append({"aggregator": [checklist]})
    assert main(["demo", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "Plan (rule)" in out
    assert [c["node"] for c in models[1][0].calls] == ["read_requirements", "aggregator"]  # no planner, no step
    [answer_prompt] = [c["messages"][-1].content for c in models[1][0].calls if c["node"] == "aggregator"]
    assert DEMO_TASK in answer_prompt and "logistics" in DEMO_TASK and "inventory" in DEMO_TASK
    [run] = run_ids(db, capsys)
    assert run["status"] == "done" and run["task"] == DEMO_TASK
    assert main(["show", run["id"], "--json", "--db", db]) == 0
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["plan_source"] == "rule" and [r["tool"] for r in state["results"]] == ["none"]
    assert state["final"] == checklist


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
    assert main(["run", TASK, SPLIT, "--db", db, "--run-id", "r1"]) == 1
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
    main(["run", TASK, SPLIT, "--db", db, "--run-id", "s1"])
    capsys.readouterr()
    assert main(["show", "s1", "--db", db]) == 0
    out = capsys.readouterr().out
    for text in (f"Run s1 (done): {TASK}", "Plan (model)", "first answer", "42", "THE FINAL ANSWER", "total"):
        assert text in out
    assert main(["show", "s1", "--json", "--db", db]) == 0
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["final"] == "THE FINAL ANSWER" and len(state["results"]) == 3


def test_run_and_show_print_a_replan_the_same_way(models, db, capsys):
    """A failed step whose revision is unusable: the live output and `show` give the same block, with the reason."""
    models[0].append(three_llm_steps(python_step=[], replanner=["no revision here"]))  # default code: a SyntaxError
    assert main(["run", TASK, SPLIT, "--db", db, "--run-id", "r1"]) == 0
    ran = capsys.readouterr().out
    assert main(["show", "r1", "--db", db]) == 0
    shown = capsys.readouterr().out

    def replan(out: str) -> str:  # the text under the replan's rule, up to the next rule
        block = out.split("Replan after step 2 failed", 1)[1].split("\n", 1)[1].split("───", 1)[0]
        return " ".join(block.split())

    assert replan(ran) == replan(shown)
    assert replan(ran).startswith("the model gave no usable revision (no JSON") and "goes on as it was" in replan(ran)


def test_the_terminal_shows_the_answer_as_checked_when_it_differs_from_what_streamed():
    from hierplan.cli.output import HumanReporter

    out = io.StringIO()
    reporter = HumanReporter(out=out)
    for offset, piece in ((0, "Final answer: "), (14, "3")):
        reporter.live(answer_token(piece, offset))
    reporter.update("aggregator", {"final": "Final answer: 3"})
    reporter.update("check_instructions", {"final": "- Green tea\n- Mint"})  # a later node changed it
    reporter.run_finished("r", "done", final="- Green tea\n- Mint")
    shown = out.getvalue()
    assert shown.index("Final answer: 3") < shown.index("Final answer, as checked") < shown.index("- Green tea")
    same = io.StringIO()
    reporter = HumanReporter(out=same)
    reporter.live(answer_token("- Green tea"))
    reporter.run_finished("r", "done", final="- Green tea")
    assert "as checked" not in same.getvalue() and same.getvalue().count("- Green tea") == 1
    unstreamed = io.StringIO()
    HumanReporter(out=unstreamed).run_finished("r", "done", final="the answer")  # e.g. a rejected plan's note
    assert "Final answer" in unstreamed.getvalue() and "the answer" in unstreamed.getvalue()


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
        main(["run", TASK, SPLIT, "--db", db, "--debug"])


def test_graph_mermaid_and_ascii(capsys):
    assert main(["graph"]) == 0
    assert "scheduler -.-> python_step" in capsys.readouterr().out
    assert main(["graph", "--format", "ascii"]) == 0
    out = capsys.readouterr().out
    assert "| planner |" in out and "| scheduler |" in out and "| aggregator |" in out


def test_help_and_light_commands_do_not_import_torch_or_pandas(tmp_path):
    code = ("import sys; from hierplan.cli.main import main\n"
            "for argv in (['graph'], ['runs', '--db', sys.argv[1]]): main(argv)\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n"
            "assert 'transformers' not in sys.modules, 'transformers was imported'\n"
            "assert 'pandas' not in sys.modules, 'pandas was imported'\n")  # only a file's preview needs it
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.sqlite")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "usage: hierplan" in proc.stdout


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_graph_png_and_svg_with_the_bundled_graphviz(tmp_path, capsys):
    """pygraphviz is a main dependency; its wheel brings Graphviz: no system package needed."""
    png, svg = tmp_path / "graph.png", tmp_path / "graph.svg"
    assert main(["graph", "--png", str(png), "--svg", str(svg)]) == 0
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 1000
    root = ET.fromstring(svg.read_bytes())
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"planner", "scheduler", "python_step", "llm_step", "replanner", "aggregator"} <= texts
    assert "scheduler -.-> python_step" in capsys.readouterr().out  # the text as before


def test_png_on_a_machine_without_font_configuration_warns_on_stderr(tmp_path, capsys, monkeypatch):
    from hierplan.render import picture

    monkeypatch.delenv("FONTCONFIG_FILE", raising=False)
    monkeypatch.setattr(picture, "FONTCONFIG_DEFAULT", str(tmp_path / "no-fonts.conf"))
    assert main(["graph", "--png", str(tmp_path / "g.png")]) == 0
    err = capsys.readouterr().err
    assert "no font configuration here" in err and "--svg" in err
    monkeypatch.setattr(picture, "FONTCONFIG_DEFAULT", __file__)  # any file that exists
    assert main(["graph", "--png", str(tmp_path / "g.png"), "--svg", str(tmp_path / "g.svg")]) == 0
    assert "no font configuration" not in capsys.readouterr().err


def test_drawing_without_a_loadable_pygraphviz_is_one_line_and_nothing_on_stdout(models, db, tmp_path, capsys,
                                                                                 monkeypatch):
    models[0].append(three_llm_steps())
    assert main(["run", TASK, SPLIT, "--db", db, "--run-id", "d1"]) == 0
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "pygraphviz", None)  # `import pygraphviz` raises ImportError, as a broken wheel
    for argv in (["graph", "--png", str(tmp_path / "g.png")], ["show", "d1", "--db", db, "--svg", str(tmp_path / "r.svg"),
                                                                 "--mermaid"]):
        assert main(argv) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1 and "pygraphviz" in captured.err and "pip install" in captured.err
    assert list(tmp_path.glob("*.png")) == [] and list(tmp_path.glob("*.svg")) == []


def test_show_draws_a_run_with_a_replan_as_png_svg_and_mermaid(models, db, tmp_path, capsys):
    revision = json.dumps({"steps": [{"id": 1, "title": "Do it in words", "instruction": "x", "tool": "llm"}]})
    models[0].append(three_llm_steps(python_step=[], replanner=[revision]))  # default code: a SyntaxError
    assert main(["run", TASK, SPLIT, "--db", db, "--run-id", "p2"]) == 0
    capsys.readouterr()
    png, svg = tmp_path / "run.png", tmp_path / "run.svg"
    assert main(["show", "p2", "--db", db, "--png", str(png), "--svg", str(svg), "--mermaid"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flowchart TD\n")
    # step 3 was replaced (its title comes from the run's earlier checkpoints), step 4 is the revision's
    assert 's3["3. Step 3 (llm)<br/>llm, replaced (replan 1)"]:::replaced' in out
    assert "s2 ==>|replan| s4" in out and 's4["4. Do it in words<br/>llm, done, ' in out
    assert "python, failed" in out and "THE FINAL ANSWER" in out
    assert png.read_bytes()[:8] == PNG_MAGIC
    root = ET.fromstring(svg.read_bytes())
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert f"run p2 (done): {TASK}" in texts and "replaced (replan 1)" in texts


def test_show_draws_a_run_waiting_for_approval(models, db, capsys):
    models[0].append(three_llm_steps())
    assert main(["run", TASK, SPLIT, "--db", db, "--run-id", "w1", "--approve"]) == 0  # no terminal: it waits
    capsys.readouterr()
    assert main(["show", "w1", "--db", db, "--mermaid"]) == 0
    out = capsys.readouterr().out
    assert 'approval(["plan approval<br/>waiting"]):::waiting' in out and "llm, pending" in out
    assert main(["show", "w1", "--db", db, "--mermaid", "--json"]) == 2
    assert "do not go with --json" in capsys.readouterr().err


def test_show_prints_the_answer_check(models, db, capsys, monkeypatch):
    """`answer_check` is a state field another part of hierplan records; show prints it as one line."""
    from hierplan.app import runs

    models[0].append(three_llm_steps())
    assert main(["run", TASK, SPLIT, "--db", db, "--run-id", "c1"]) == 0
    real = runs.run_state

    def with_check(db_path, run_id):
        record, values = real(db_path, run_id)
        return record, {**values, "answer_check": {"ok": False, "answer_number": 41, "computed": 42,
                                                   "note": "the last number differs"}}

    monkeypatch.setattr(runs, "run_state", with_check)
    capsys.readouterr()
    assert main(["show", "c1", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "Answer check: MISMATCH (answer 41, computed 42): the last number differs" in out
    assert out.index("THE FINAL ANSWER") < out.index("Answer check")


def test_options_given_on_resume_override_the_runs_even_when_zero():
    from hierplan.app.fields import from_args
    from hierplan.cli.main import build_parser
    from hierplan.options import RunOptions

    started = RunOptions(max_replans=2, temperature=0.7, seed=5, parallel=False, model="m")
    given = build_parser().parse_args(["resume", "r", "--max-replans", "0", "--temperature", "0", "--seed", "0"])
    assert started.merged(from_args(given)) == RunOptions(max_replans=0, temperature=0.0, seed=0, parallel=False,
                                                          model="m")
    assert started.merged(from_args(build_parser().parse_args(["resume", "r"]))) == started  # flags left off


def test_every_run_option_is_a_flag_derived_from_run_options():
    """Type from the annotation, choices from a Literal, negative flags from the field's metadata."""
    from dataclasses import fields

    from hierplan.app.fields import flag
    from hierplan.cli.main import build_parser
    from hierplan.options import RunOptions

    parser = build_parser()
    run = parser.parse_args(["run", "t", "--engine", "llama.cpp", "--max-new-tokens", "9", "--temperature", "0.5",
                             "--no-constrain", "--sequential", "--max-repairs", "0", "--approve", "--kind", "numeric"])
    from hierplan.app.fields import from_args

    assert from_args(run) == {"engine": "llama.cpp", "max_new_tokens": 9, "temperature": 0.5, "constrain": False,
                              "parallel": False, "max_repairs": 0, "approve": True}
    assert run.kind == "numeric"
    help_text = parser._subparsers._group_actions[0].choices["run"].format_help()
    assert all(flag(f) in help_text for f in fields(RunOptions))
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "t", "--engine", "vllm"])  # not one of the Literal's choices


@pytest.mark.parametrize("argv, message", [
    (["--max-repairs", "-1"], "--max-repairs must be 0 or more, got -1"),
    (["--temperature", "-0.5"], "--temperature must be 0 or more"),
    (["--max-new-tokens", "0"], "--max-new-tokens must be 1 or more"),
])
def test_a_run_option_below_its_minimum_is_one_line_and_exit_2(models, db, capsys, argv, message):
    assert main(["run", "t", "--db", db, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# ---------------------------------------------------------------- eval options

REVISION = json.dumps({"steps": [{"id": 1, "title": "Try again", "instruction": "Answer differently", "tool": "llm"}]})


def eval_tasks(tmp_path, n=1):
    path = tmp_path / "tasks.jsonl"
    # each question names parts ("steps"): the planner plans it with split_writing (without, one piece by rule)
    path.write_text("".join(json.dumps({"question": f"Question {i} in steps", "answer": "#### 7"}) + "\n"
                            for i in range(n)))
    return str(path)


@pytest.mark.parametrize("max_replans, replanner_calls, step_ids", [("0", 0, [1, 2, 3]), ("1", 1, [1, 4])])
def test_eval_max_replans_decides_whether_a_failed_step_is_replanned(models, tmp_path, max_replans,
                                                                     replanner_calls, step_ids):
    scripts, made = models
    # step 1's answer is empty: a failed step; step 4 is the revision's step
    scripts.append({"planner": [plan_json(["llm", "llm", "llm"])], "llm_step": ["", "two", "three"],
                    "replanner": [REVISION], "aggregator": ["#### 7"]})
    out = tmp_path / "out"
    assert main(["eval", eval_tasks(tmp_path), "--out", str(out), "--max-replans", max_replans, SPLIT]) == 0
    assert made[0].count("replanner") == replanner_calls
    meta = json.loads((out / "summary.json").read_text())["meta"]
    assert meta["max replans"] == int(max_replans)
    # the real command line, recorded by main()
    assert meta["command"] == f"hierplan eval {eval_tasks(tmp_path)} --out {out} --max-replans {max_replans} {SPLIT}"
    [row] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["steps_done"] == len(step_ids)


def test_base_url_goes_to_the_loader_only_when_given_and_no_key_is_stored(tmp_path, monkeypatch, capsys):
    from fakes import ScriptedChatModel

    import hierplan.models

    key = "sk-test-SECRET-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    loads = []

    def fake_load(model=None, **kwargs):
        loads.append((model, kwargs))
        return ScriptedChatModel(script={"planner": [plan_json(["llm"] * 3)]})

    monkeypatch.setattr(hierplan.models, "load_chat_model", fake_load, raising=False)
    db = str(tmp_path / "k.sqlite")
    assert main(["run", "t", "--db", db, "--run-id", "b1", "--model", "openai:qwen",
                 "--base-url", "http://127.0.0.1:9/v1"]) == 0
    assert main(["run", "t", "--db", db, "--run-id", "b2", "--max-new-tokens", "50"]) == 0
    assert loads == [("openai:qwen", {"base_url": "http://127.0.0.1:9/v1"}), (None, {"max_new_tokens": 50})]
    # resume reuses the stored URL
    assert main(["resume", "b1", "--db", db]) == 0
    assert loads[-1] == ("openai:qwen", {"base_url": "http://127.0.0.1:9/v1"})
    for path in tmp_path.glob("k.sqlite*"):  # the database, its WAL and shared memory
        assert key.encode() not in path.read_bytes()
    capsys.readouterr()
    assert main(["run", "t", "--db", db, "--base-url", "http://user:pw@host/v1"]) == 2
    err = capsys.readouterr().err
    assert "must not hold a password" in err and "pw" not in err.replace("password", "") and err.count("\n") == 1


def test_concurrency_runs_tasks_at_once_and_reports_each_as_it_finishes(tmp_path):
    import threading

    from fakes import ScriptedChatModel
    from hierplan import build_graph
    from hierplan.eval import load_tasks, run_eval

    together = threading.Barrier(3, timeout=10)  # passes only when 3 planners wait at once

    def planner(messages):
        if "Question 3" not in messages[-1].content:  # the fourth task runs alone
            together.wait()
        return plan_json(["llm"] * 3)

    def aggregator(messages):  # answers with the task's own number: a mixed-up thread would show
        return "#### " + messages[-1].content.split("Question ", 1)[1].split()[0]

    model = ScriptedChatModel(default={"planner": planner, "aggregator": aggregator})
    graph = build_graph(model, constrain=False, split_writing=True)  # the planners run
    seen = []
    records = run_eval(graph, load_tasks(eval_tasks(tmp_path, 4)), thread_prefix="c", concurrency=3,
                       on_result=lambda r, i, n: seen.append((r["index"], i, n)))
    assert [r["error"] for r in records] == [None] * 4
    assert [r["predicted"] for r in records] == ["0", "1", "2", "3"]  # in task order, each its own answer
    assert sorted(s[0] for s in seen) == [r["index"] for r in records]
    assert [s[1:] for s in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_concurrency_one_runs_one_task_at_a_time(tmp_path):
    from fakes import ScriptedChatModel
    from hierplan import build_graph
    from hierplan.eval import load_tasks, run_eval

    active, most = [0], [0]

    def planner(messages):
        active[0] += 1
        most[0] = max(most[0], active[0])
        time.sleep(0.01)
        active[0] -= 1
        return plan_json(["llm"] * 3)

    graph = build_graph(ScriptedChatModel(default={"planner": planner}), constrain=False, split_writing=True)
    run_eval(graph, load_tasks(eval_tasks(tmp_path, 3)), concurrency=1)
    assert most == [1]
    with pytest.raises(ValueError, match="at least 1"):
        run_eval(graph, [], concurrency=0)


def test_eval_concurrency_must_be_positive(models, tmp_path, capsys):
    assert main(["eval", eval_tasks(tmp_path), "--out", str(tmp_path / "o"), "--concurrency", "0"]) == 2
    assert "--concurrency must be at least 1" in capsys.readouterr().err


def test_the_run_record_names_the_model_its_engine_and_quantization(models, db, capsys, monkeypatch):
    import hierplan.models
    from fakes import ScriptedChatModel

    info = {"name": "Qwen2.5-Coder-1.5B-Instruct", "engine": "llama.cpp", "quantization": "Q4_K_M",
            "device": "cpu", "path": "/somewhere/model.gguf"}
    fake = ScriptedChatModel(script=three_llm_steps(), metadata={"hierplan_model": info})
    monkeypatch.setattr(hierplan.models, "load_chat_model", lambda *a, **k: fake)
    monkeypatch.setenv("COLUMNS", "200")  # the runs table on one line
    assert main(["run", TASK, SPLIT, "--json", "--db", db, "--run-id", "m1"]) == 0
    started = json.loads(capsys.readouterr().out.splitlines()[0])
    recorded = {k: info[k] for k in ("name", "engine", "quantization", "device")}
    assert started["event"] == "run_started" and started["model"] == recorded
    assert main(["show", "m1", "--json", "--db", db]) == 0
    assert json.loads(capsys.readouterr().out)["run"]["model"] == recorded
    assert main(["runs", "--db", db]) == 0
    assert "Qwen2.5-Coder-1.5B-Instruct on llama.cpp (Q4_K_M)" in capsys.readouterr().out
