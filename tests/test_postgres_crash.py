"""Postgres runs across processes and through server restarts, against a real throwaway server (tests/pg.py).

"Machine A" and "machine B" are two processes (tests/cli_worker.py, a scripted model) with their own HOME and
state dirs that share nothing but the Postgres URL; a run's liveness comes from its lease in Postgres (an
advisory lock held by the running process), so nothing here depends on them sharing a host.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fakes import plan_json
from helpers import WORKER, cli, events, one_line_error, saved_values, statuses
from pg import PASSWORD, pg_cluster, pg_url  # noqa: F401  (fixtures)
from test_crash import kill9, spawn, wait_for, worker_env

PLAN = ["llm", "python", "llm", "llm"]  # 4 steps, each after the ones before
STEPS = [1, 2, 3, 4]
# Tasks with parts (rules.plan PARTS_RE): the planner plans them with --split-writing; without it, one piece of
# writing is planned by rule
TASK = "Draft a plan"


def machine(tmp_path: Path, name: str, spec: dict, **extra: str) -> tuple[Path, dict]:
    folder = tmp_path / name
    (folder / "home").mkdir(parents=True)
    env = worker_env(folder, spec, "calls.json", HOME=str(folder / "home"), HIERPLAN_STATE_DIR=str(folder / "state"))
    env.pop("HIERPLAN_DB", None)
    return folder, {**env, **extra}


def on(env: dict, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, WORKER, *argv], env=env, capture_output=True, text=True, timeout=timeout)


def runs_seen(env: dict, url: str) -> dict[str, str]:
    proc = on(env, "runs", "--json", "--db", url)
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r["status"] for r in json.loads(proc.stdout)}


def test_killed_on_machine_a_then_resumed_on_machine_b(pg_url, tmp_path):
    a_dir, a_env = machine(tmp_path, "a", {"plan": PLAN, "pause": {"at": "llm_step", "step": 3, "seconds": 60}},
                           HIERPLAN_DB=pg_url)  # A names the server by $HIERPLAN_DB, B by --db
    b_dir, b_env = machine(tmp_path, "b", {"plan": PLAN})

    proc = spawn(["run", "--split-writing", "--json", "--run-id", "xm", "Do the four steps"], a_env)
    wait_for(a_dir / "paused", proc)
    try:
        # While A runs it, B sees it running and cannot take it over.
        assert runs_seen(b_env, pg_url) == {"xm": "running"}
        refused = on(b_env, "resume", "xm", "--db", pg_url)
        assert refused.returncode == 2 and "still running" in refused.stderr, refused.stderr
    finally:
        first = events(kill9(proc))
    assert [e["step_id"] for e in first if e["event"] == "step_finished"] == [1, 2]

    assert runs_seen(b_env, pg_url) == {"xm": "interrupted"}
    shown = json.loads(on(b_env, "show", "xm", "--json", "--db", pg_url).stdout)
    assert shown["run"]["status"] == "interrupted" and [r["step_id"] for r in shown["state"]["results"]] == [1, 2]

    resumed = on(b_env, "resume", "xm", "--json", "--db", pg_url)
    assert resumed.returncode == 0, resumed.stderr
    calls = json.loads((b_dir / "calls.json").read_text())
    assert [(c["node"], c["step"]) for c in calls] == [("llm_step", 3), ("llm_step", 4), ("aggregator", None)]
    last = events(resumed.stdout)[-1]
    assert (last["event"], last["status"], last["final"]) == ("run_finished", "done", "FINAL ANSWER")
    assert runs_seen(a_env, pg_url) == {"xm": "done"}  # and A sees what B did
    after = saved_values(pg_url, "xm")
    assert [r["output"] for r in after["results"]] == ["answer for step 1", "42", "answer for step 3",
                                                     "answer for step 4"]
    assert not list(tmp_path.rglob("*.sqlite"))  # neither machine kept anything locally


def three_steps(**extra):
    return {"planner": [plan_json(["llm", "llm", "llm"])], "llm_step": ["one", "two", "three"],
            "aggregator": ["FINAL"], **extra}


def test_a_postgres_restart_during_a_step_fails_the_run_cleanly_and_resume_finishes_it(models, pg_cluster, pg_url):
    scripts, made = models

    def restart_then_answer(messages):
        pg_cluster.stop()  # every session ends: the pools' connections and the run's lease
        pg_cluster.start()
        return "two"

    scripts.append(three_steps(llm_step=["one", restart_then_answer, "three"]))
    try:
        code, _, err = cli("run", TASK, "--split-writing", "--db", pg_url, "--run-id", "rs")
    finally:
        if not pg_cluster.up:
            pg_cluster.start()
    assert code == 1, err
    one_line_error(err, "run rs failed", "hierplan resume rs")
    assert PASSWORD not in err
    assert statuses(pg_url) == {"rs": "failed"}  # the status write reconnected
    # LangGraph saves checkpoints in the background while the next step runs ("async" durability), so the
    # failed write surfaces a step or more later, and later writes (on a new connection) may have saved more:
    # what was saved is a prefix of the run, step 1 at least.
    before = saved_values(pg_url, "rs")
    saved = [r["output"] for r in before.get("results") or []]
    assert saved and saved == ["one", "two", "three"][:len(saved)]

    # The same process resumes it: its pools replaced the dead connections. Only what was not saved runs.
    scripts.append({"llm_step": ["two", "three"][len(saved) - 1:], "aggregator": ["FINAL"]})
    code, _, err = cli("resume", "rs", "--db", pg_url)
    assert code == 0, err
    redone = ["llm_step"] * (3 - len(saved)) + ([] if before.get("final") else ["aggregator"])
    assert [c["node"] for c in made[1].calls] == redone
    assert [r["output"] for r in saved_values(pg_url, "rs")["results"]] == ["one", "two", "three"]
    assert statuses(pg_url) == {"rs": "done"}


def test_postgres_still_down_at_the_write_leaves_the_run_interrupted(models, pg_cluster, pg_url, monkeypatch,
                                                                     tmp_path):
    """The status write cannot land either: the row still says running, but its lease died with the server,
    so once the server is back any process sees the run interrupted and can resume it."""
    from hierplan.store import postgres

    monkeypatch.setattr(postgres, "POOL_WAIT_S", 1)  # the status write gives up after 1 s, not 30
    scripts, _ = models

    def stop_then_answer(messages):
        pg_cluster.stop()
        return "two"

    scripts.append(three_steps(llm_step=["one", stop_then_answer]))
    try:
        code, out, err = cli("run", TASK, "--split-writing", "--db", pg_url, "--run-id", "down")
    finally:
        pg_cluster.start()
    assert code == 1
    one_line_error(err, "run down failed", "hierplan resume down")
    assert PASSWORD not in err + out

    _, b_env = machine(tmp_path, "b", {"plan": ["llm", "llm", "llm"]})
    assert runs_seen(b_env, pg_url) == {"down": "interrupted"}
    resumed = on(b_env, "resume", "down", "--db", pg_url)
    assert resumed.returncode == 0, resumed.stderr
    assert runs_seen(b_env, pg_url) == {"down": "done"}
    assert [r["step_id"] for r in saved_values(pg_url, "down")["results"]] == [1, 2, 3]
