"""Crash-proof: `hierplan run` killed with SIGKILL anywhere is resumed by `hierplan resume`, losing nothing.

The run is a subprocess (tests/cli_worker.py, a scripted fake model) that writes a marker file when it
reaches the kill point and then sleeps there; the test kills it, checks `hierplan runs` and the database,
resumes it in a second process and checks which model calls the resumed process made.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from fakes import integrity
from helpers import WORKER, cli, events, one_line_error, saved_values, statuses

PLAN = ["llm", "python", "llm", "llm"]  # 4 steps, each depending on the ones before (no depends_on)
# Tasks with parts (rules.plan PARTS_RE): with --split-writing the planner plans them; without it, one piece of
# writing is planned by rule
TASK = "Do the four steps"
STEPS = [1, 2, 3, 4]


def worker_env(tmp: Path, spec: dict, calls: str, **extra: str) -> dict:
    env = dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps(spec), HIERPLAN_WORKER_DIR=str(tmp),
               HIERPLAN_WORKER_CALLS=str(tmp / calls), PYTHONUNBUFFERED="1", **extra)
    return env


def spawn(argv: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, WORKER, *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return json.loads(path.read_text())
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"worker exited {proc.returncode} before {path.name}: {err[-2000:]}")
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"worker never reached {path.name}")


def kill9(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=30)  # reaped: its pid is gone, as after a real kill -9
    assert proc.returncode == -signal.SIGKILL
    return out


def sandbox_code(token: str) -> str:
    """A python step that names its process (so the test can find it) and runs for a while."""
    return ("import ctypes, time\n"
            f"ctypes.CDLL(None).prctl(15, b{token!r}, 0, 0, 0)\n"
            "time.sleep(8)\nprint(42)\n")


def live_processes_named(name: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if comm == name and state not in ("Z", "X"):
            found.append(int(entry))
    return found


# kill point -> (pause spec, steps whose results must already be saved when it is killed)
KILL_POINTS = {
    "planning": ({"at": "planner"}, []),
    "llm_step": ({"at": "llm_step", "step": 3}, [1, 2]),
    "python_step_model": ({"at": "python_step", "step": 2}, [1]),
    "python_step_sandbox": ({"at": "sandbox"}, [1]),
    "between_steps": ({"at": "scheduler", "step": 3}, [1, 2]),  # scheduler call 3: after step 2's checkpoint
    "aggregator": ({"at": "aggregator"}, STEPS),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_sigkill_anywhere_then_resume_loses_and_repeats_nothing(tmp_path, point):
    pause, saved_before = KILL_POINTS[point]
    db, run_id = str(tmp_path / "runs.sqlite"), f"crash-{point}"
    token = "hp" + uuid.uuid4().hex[:12]
    spec = {"plan": PLAN, "pause": {**pause, "seconds": 60},
            "code": sandbox_code(token) if point == "python_step_sandbox" else "print(42)"}

    proc = spawn(["run", "--split-writing", "--json", "--db", db, "--run-id", run_id, TASK],
                 worker_env(tmp_path, spec, "calls1.json"))
    where = wait_for(tmp_path / "paused", proc)
    if point == "python_step_sandbox":
        deadline = time.monotonic() + 10
        while not live_processes_named(token) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert live_processes_named(token), "the sandboxed code never started"
    first = events(kill9(proc))
    assert where["at"] == pause["at"]

    # The killed run: listed as interrupted, its finished steps saved, the database intact.
    assert statuses(db)[run_id] == "interrupted"
    assert integrity(db) == "ok"
    before = saved_values(db, run_id)
    assert [r["step_id"] for r in before.get("results") or []] == saved_before
    assert [e["step_id"] for e in first if e["event"] == "step_finished"] == saved_before
    if point == "python_step_sandbox":  # the sandboxed program died with the run (parent-death signal, reaper)
        deadline = time.monotonic() + 5
        while live_processes_named(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not live_processes_named(token), "the sandboxed code outlived the killed run"

    # Resume in a fresh process: only what had not finished runs, once.
    resumed = subprocess.run([sys.executable, WORKER, "resume", run_id, "--json", "--db", db],
                             env=worker_env(tmp_path, {"plan": PLAN}, "calls2.json"),
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    calls = json.loads((tmp_path / "calls2.json").read_text())
    remaining = [s for s in STEPS if s not in saved_before]
    assert [c for c in calls if c["node"] in ("planner", "planner_retry")] == (
        [{"node": "planner", "step": None}] if point == "planning" else [])
    assert sorted(c["step"] for c in calls if c["node"] in ("llm_step", "python_step")) == remaining
    assert [c["node"] for c in calls].count("aggregator") == 1
    second = events(resumed.stdout)
    assert second[0] == {"event": "run_started", "run_id": run_id, "task": TASK, "resumed": True,
                         "model": None, "kind": "writing"}  # the scripted model records none; classify ran
    assert [e["step_id"] for e in second if e["event"] == "step_finished"] == remaining
    assert second[-1]["event"] == "run_finished" and second[-1]["status"] == "done"
    assert second[-1]["final"] == "FINAL ANSWER"

    # Exactly steps 1..n, once each, with their own outputs; the run is done; the file is intact.
    after = saved_values(db, run_id)
    assert [r["step_id"] for r in after["results"]] == STEPS
    assert [r["output"] for r in after["results"]] == ["answer for step 1", "42", "answer for step 3",
                                                     "answer for step 4"]
    assert after["final"] == "FINAL ANSWER"
    assert statuses(db)[run_id] == "done"
    assert integrity(db) == "ok"


def test_a_run_killed_twice_still_finishes_once(tmp_path):
    """Killed during step 3, resumed, killed again in the aggregator, resumed again."""
    db, run_id = str(tmp_path / "runs.sqlite"), "twice"
    proc = spawn(["run", "--split-writing", "--json", "--db", db, "--run-id", run_id, TASK],
                 worker_env(tmp_path, {"plan": PLAN, "pause": {"at": "llm_step", "step": 3}}, "c1.json"))
    wait_for(tmp_path / "paused", proc)
    kill9(proc)
    (tmp_path / "paused").unlink()
    proc = spawn(["resume", run_id, "--json", "--db", db],
                 worker_env(tmp_path, {"plan": PLAN, "pause": {"at": "aggregator"}}, "c2.json"))
    wait_for(tmp_path / "paused", proc)
    kill9(proc)
    assert statuses(db)[run_id] == "interrupted"
    assert [r["step_id"] for r in saved_values(db, run_id)["results"]] == STEPS
    code = subprocess.run([sys.executable, WORKER, "resume", run_id, "--db", db],
                          env=worker_env(tmp_path, {"plan": PLAN}, "c3.json"), capture_output=True,
                          text=True, timeout=120)
    assert code.returncode == 0, code.stderr
    assert [c["node"] for c in json.loads((tmp_path / "c3.json").read_text())] == ["aggregator"]
    assert [c["step"] for c in json.loads((tmp_path / "c2.json").read_text())] == [3, 4, None]
    assert statuses(db)[run_id] == "done" and integrity(db) == "ok"


def test_resume_refuses_a_run_whose_process_is_alive(tmp_path):
    """While the run's process lives, it is 'running' and resume says so (exit 2) and changes nothing."""
    db, run_id = str(tmp_path / "runs.sqlite"), "alive"
    proc = spawn(["run", "--split-writing", "--json", "--db", db, "--run-id", run_id, TASK],
                 worker_env(tmp_path, {"plan": PLAN, "pause": {"at": "llm_step", "step": 3}}, "c1.json"))
    try:
        wait_for(tmp_path / "paused", proc)
        assert statuses(db)[run_id] == "running"
        code, _, err = cli("resume", run_id, "--db", db)
        assert code == 2
        one_line_error(err, "still running")
        assert statuses(db)[run_id] == "running"
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert statuses(db)[run_id] == "interrupted"


# ---------------------------------------------------------------------------------------------------------
# The embedded model, killed for real during a step.

@pytest.mark.real_model
def test_real_model_run_killed_during_a_step_is_resumed(tmp_path):
    db, run_id = str(tmp_path / "runs.sqlite"), "real-kill"
    env = dict(os.environ, HIERPLAN_WORKER_REAL="1", PYTHONUNBUFFERED="1")
    # --max-new-tokens caps the planner too: its JSON cannot fit, so the fixed 3-step fallback plan is used
    # (the task names parts, "steps", so with --split-writing the planner plans it: one piece of writing is
    # planned by rule).
    argv = ["run", "--json", "--db", db, "--run-id", run_id, "--max-new-tokens", "6", "--seed", "1",
            "--sequential", "--split-writing", "Name two colours in three steps."]
    proc = spawn(argv, env)
    lines: list[str] = []
    planned = threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if '"event": "plan"' in line:
                planned.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not planned.wait(120):
        proc.kill()
        raise AssertionError(f"no plan event: {proc.stderr.read()[-2000:]}")
    time.sleep(0.3)  # into step 1 (or just past it)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    reader.join(10)
    first = events("".join(lines))
    n_steps = len(next(e for e in first if e["event"] == "plan")["plan"]["steps"])
    assert not any(e["event"] == "run_finished" for e in first), "the run finished before the kill"
    assert statuses(db)[run_id] == "interrupted" and integrity(db) == "ok"
    saved = [r["step_id"] for r in saved_values(db, run_id).get("results") or []]

    resumed = subprocess.run([sys.executable, WORKER, "resume", run_id, "--json", "--db", db], env=env,
                             capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    second = events(resumed.stdout)
    assert not any(e["event"] == "plan" for e in second)  # not planned again
    redone = [e["step_id"] for e in second if e["event"] == "step_finished"]
    assert redone == [s for s in range(1, n_steps + 1) if s not in saved]
    assert second[-1]["status"] == "done" and second[-1]["final"]
    after = saved_values(db, run_id)
    assert [r["step_id"] for r in after["results"]] == list(range(1, n_steps + 1))
    assert statuses(db)[run_id] == "done" and integrity(db) == "ok"
