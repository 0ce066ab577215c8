"""Concurrency: several runs at once on one database file, in threads and in processes.

No corruption (PRAGMA integrity_check), no lost writes (every step of every run checkpointed), and each
run's results only in its own thread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fakes import FakeExecution, ScriptedChatModel, integrity, plan_json
from hierplan import build_graph, open_checkpointer
from hierplan.store import RunStore

WORKER = str(Path(__file__).with_name("cli_worker.py"))
N_STEPS = 6
TOOLS = ["llm", "python"] * (N_STEPS // 2)


def task_of(tag: str) -> str:
    """The run's task: it names its run, and a deliverable with parts ("plan"), so the planner plans it in a run
    with split_writing (without it, one piece of writing planned by rule, rules.plan)."""
    return f"task of {tag}: draft a plan"


def tagged_model(tag: str) -> ScriptedChatModel:
    """Every reply names its run, so a result that lands in the wrong thread is seen."""
    return ScriptedChatModel(
        script={"planner": [plan_json(TOOLS, goal=f"goal of {tag}")]},
        default={"llm_step": lambda m: f"{tag} llm {m[-1].content.split(':')[0]}",
                 "python_step": f"print('{tag} python')",
                 "aggregator": f"{tag} final"})


def fake_runner(code: str, before=()) -> FakeExecution:
    """The sandbox stand-in: 'runs' print('<text>') by echoing text (keeps CPU use low)."""
    return FakeExecution(ok=True, stdout=code.split("'")[1] + "\n")


def check_thread(saver, tag: str) -> None:
    config = {"configurable": {"thread_id": tag}}
    values = saver.get_tuple(config).checkpoint["channel_values"]
    assert values["plan"]["goal"] == f"goal of {tag}"
    assert [r["step_id"] for r in values["results"]] == list(range(1, N_STEPS + 1))
    for r in values["results"]:
        assert r["output"].startswith(f"{tag} "), (tag, r["output"])
    assert values["final"] == f"{tag} final"
    # No lost write: a checkpoint after every step (sequential dependencies), each in this thread.
    counts = {len(c.checkpoint["channel_values"].get("results") or []) for c in saver.list(config)}
    assert counts == set(range(N_STEPS + 1))


def run_in_threads(work, args) -> None:
    """work(arg) for every arg, each in its own thread, all at once."""
    threads = [threading.Thread(target=work, args=(a,)) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)


@pytest.mark.parametrize("shared", [True, False], ids=["one-saver", "saver-per-thread"])
def test_runs_in_threads_share_one_database(tmp_path, shared):
    db = str(tmp_path / "runs.sqlite")
    tags = [f"t{i}" for i in range(6)]
    one = open_checkpointer(db) if shared else None
    errors: dict[str, BaseException] = {}
    barrier = threading.Barrier(len(tags))

    def work(tag: str) -> None:
        try:
            saver = one if shared else open_checkpointer(db)
            graph = build_graph(tagged_model(tag), saver, run_code=fake_runner, constrain=False, split_writing=True)
            barrier.wait()
            out = graph.invoke({"task": task_of(tag)}, {"configurable": {"thread_id": tag}})
            assert out["final"] == f"{tag} final"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors[tag] = exc

    run_in_threads(work, tags)
    assert not errors, errors
    saver = open_checkpointer(db)
    for tag in tags:
        check_thread(saver, tag)
    assert integrity(db) == "ok"


def test_one_graph_serves_several_threads_at_once(tmp_path):
    """One compiled graph (one model, one saver) invoked from several threads with their own thread_id."""
    db = str(tmp_path / "runs.sqlite")
    tags = [f"g{i}" for i in range(4)]

    def reply(node):
        def answer(messages):
            text = messages[-1].content
            tag = next(t for t in tags if f"task of {t}" in text or f"goal of {t}" in messages[0].content
                       or f"goal of {t}" in text)
            return {"planner": plan_json(TOOLS, goal=f"goal of {tag}"), "python_step": f"print('{tag} python')",
                    "aggregator": f"{tag} final"}.get(node, f"{tag} llm")
        return answer

    model = ScriptedChatModel(default={n: reply(n) for n in ("planner", "llm_step", "python_step", "aggregator")})
    saver = open_checkpointer(db)
    graph = build_graph(model, saver, run_code=fake_runner, constrain=False, split_writing=True)
    errors = []

    def work(tag):
        try:
            graph.invoke({"task": task_of(tag)}, {"configurable": {"thread_id": tag}})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    run_in_threads(work, tags)
    assert not errors, errors
    for tag in tags:
        check_thread(saver, tag)
    assert integrity(db) == "ok"


def test_cli_runs_in_separate_processes_on_one_fresh_database(tmp_path):
    """Three `hierplan run` processes started together on a database file that does not exist yet."""
    db = str(tmp_path / "shared.sqlite")
    tags = ["pa", "pb", "pc"]
    procs = {}
    for tag in tags:
        env = dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps({"plan": ["llm"] * N_STEPS, "tag": tag}))
        procs[tag] = subprocess.Popen([sys.executable, WORKER, "run", "--split-writing", "--json", "--db", db,
                                       "--run-id", tag, task_of(tag)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
    for tag, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"{tag}: {err}"
        assert json.loads(out.splitlines()[-1])["status"] == "done"

    runs = {r.id: r for r in RunStore.open(db).list()}
    assert {t: runs[t].status for t in tags} == {t: "done" for t in tags}
    saver = open_checkpointer(db)
    for tag in tags:
        values = saver.get_tuple({"configurable": {"thread_id": tag}}).checkpoint["channel_values"]
        assert values["task"] == task_of(tag)
        assert [r["output"] for r in values["results"]] == [f"{tag}: answer for step {i}"
                                                             for i in range(1, N_STEPS + 1)]
        assert values["final"] == "FINAL ANSWER"
    assert integrity(db) == "ok"


def test_reading_runs_while_another_process_writes(tmp_path):
    """`hierplan runs` and `show` from this process while a run writes in another: never blocked or broken."""
    from test_crash import cli

    db = str(tmp_path / "live.sqlite")
    env = dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps({"plan": ["llm"] * 8, "tag": "w"}))
    proc = subprocess.Popen([sys.executable, WORKER, "run", "--split-writing", "--json", "--db", db, "--run-id", "w",
                             "Draft a plan"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = set()
    while proc.poll() is None:
        time.sleep(0.05)
        if not os.path.exists(db):
            continue
        code, out, err = cli("runs", "--json", "--db", db)
        assert code == 0, err
        for run in json.loads(out):
            seen.add(run["status"])
            code, out, err = cli("show", run["id"], "--json", "--db", db)
            assert code == 0, err
            json.loads(out)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    code, out, _ = cli("show", "w", "--json", "--db", db)
    state = json.loads(out)["state"]
    assert len(state["results"]) == 8 and json.loads(out)["run"]["status"] == "done"
    assert integrity(db) == "ok"
