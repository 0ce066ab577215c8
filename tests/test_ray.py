"""`hierplan eval --ray`: tasks spread over a real local Ray cluster (ray.init(num_cpus=2), started once for
this module), actors building a scripted model from tests/ray_models.py; an actor killed mid-task."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from helpers import cli, one_line_error
from hierplan.eval.report import read_results
from ray_models import question, read_log
from ray_support import (FACTORY, KILLED_TASK, REPO, RUN_TIMEOUT_S, assert_each_task_once_and_right,  # noqa: F401
                         assert_resumed_not_restarted, evaluate, kill_mid_task, make_tasks, ray_cluster)


def test_every_task_once_and_each_actor_builds_its_model_once(ray_cluster, tmp_path):
    log = str(tmp_path / "calls.jsonl")
    records = evaluate(tmp_path, 6, {"log": log})
    assert_each_task_once_and_right(records, 6)
    built = [e["pid"] for e in read_log(log) if e["event"] == "model_built"]
    assert len(built) == 2 == len(set(built))
    assert {r["worker"]["pid"] for r in records} == set(built)  # both actors got work
    assert not any(r["resumed"] for r in records)
    planner_calls = Counter(e["task"] for e in read_log(log) if e.get("node") == "planner")
    assert planner_calls == {i: 1 for i in range(1, 7)}


def test_actor_killed_mid_task_resumes_from_its_checkpoint_in_another_process(ray_cluster, tmp_path):
    records, killed, log = kill_mid_task(tmp_path, 6)
    assert_resumed_not_restarted(records, killed, log, 6)

    from hierplan import open_checkpointer
    from hierplan.store import read_checkpoint

    db = str(tmp_path / "runs.sqlite")
    saved = read_checkpoint(open_checkpointer(db), f"t-{KILLED_TASK}", db)
    assert [r["step_id"] for r in saved["results"]] == [1, 2, 3]


def test_cli_eval_with_ray_writes_every_task_once(ray_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("HIERPLAN_MODEL_FACTORY", FACTORY)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"question": question(i), "answer": f"#### {i}"}) + "\n"
                             for i in range(1, 5)))
    code, stdout, err = cli("eval", str(tasks), "--ray", "--actors", "2", "--db", str(tmp_path / "runs.sqlite"),
                            "--out", str(tmp_path / "out"), "--json", "--split-writing")
    assert code == 0, err
    assert json.loads(stdout)["correct"] == 4
    records = read_results(tmp_path / "out" / "results.jsonl")
    assert sorted(r["index"] for r in records) == [1, 2, 3, 4]
    assert len({r["worker"]["pid"] for r in records}) == 2
    meta = json.loads((tmp_path / "out" / "summary.json").read_text())["meta"]
    assert meta["actors"] == 2 and meta["ray"].startswith("default")
    assert "- actors: 2" in (tmp_path / "out" / "summary.md").read_text()


def test_cli_actors_without_ray_is_a_usage_error_before_anything_is_written(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"question": "q", "answer": "1"}) + "\n")
    code, _, err = cli("eval", str(tasks), "--actors", "2", "--out", str(tmp_path / "out"))
    assert code == 2
    one_line_error(err, "--actors goes with --ray")
    assert not (tmp_path / "out").exists()


def test_cli_ray_needs_a_shared_database(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"question": "q", "answer": "1"}) + "\n")
    code, _, err = cli("eval", str(tasks), "--ray", "--out", str(tmp_path / "out"))
    assert code == 2
    one_line_error(err, "--ray needs --db")


def test_cli_ray_missing_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"question": "q", "answer": "1"}) + "\n")
    code, _, err = cli("eval", str(tasks), "--ray", "auto", "--db", str(tmp_path / "r.sqlite"),
                       "--out", str(tmp_path / "out"))
    assert code == 1
    one_line_error(err, "--ray needs Ray", "pip install 'hierplan[ray]'")


def test_eval_modules_and_eval_help_do_not_import_ray():
    probe = ("import sys, contextlib, io\n"
             "import hierplan.eval, hierplan.eval.harness, hierplan.eval.distributed, hierplan.eval.command\n"
             "from hierplan.cli.main import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             "    try:\n        main(['eval', '--help'])\n    except SystemExit:\n        pass\n"
             "assert '--ray' in out.getvalue() and '--actors' in out.getvalue(), out.getvalue()\n"
             "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_model_that_cannot_load_is_one_user_error_and_frees_the_cluster(ray_cluster, tmp_path):
    from hierplan.errors import ModelNotFoundError
    from hierplan.eval.distributed import run_eval_on_ray

    with pytest.raises(ModelNotFoundError, match="no model named 'nope' here"):
        run_eval_on_ray(make_tasks(3), {"model": "nope"}, db=str(tmp_path / "runs.sqlite"), actors=2,
                        model_factory="ray_models:missing")
    deadline = time.monotonic() + 30  # its actors are stopped: their CPUs come back for the next evaluation
    while ray_cluster.available_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ray_cluster.available_resources().get("CPU", 0) == 2


@pytest.mark.parametrize("resources, options, actors, n_tasks, expected", [
    ({"CPU": 4.0}, {}, None, 10, (4, 0)),                  # one actor per CPU by default
    ({"CPU": 4.0}, {}, None, 2, (2, 0)),                   # never more actors than tasks
    ({"CPU": 4.0}, {}, 3, 10, (3, 0)),
    ({"CPU": 16.0, "GPU": 2.0}, {"device": "cuda"}, None, 10, (2, 1)),  # cuda: one GPU per actor
])
def test_pool_size(resources, options, actors, n_tasks, expected):
    from hierplan.eval.distributed import pool_size

    assert pool_size(resources, options, actors, n_tasks) == expected


@pytest.mark.parametrize("resources, options, actors, message", [
    ({"CPU": 2.0}, {}, 3, "--actors 3: the Ray cluster has 2 CPUs, room for 2 actors"),
    ({"CPU": 2.0}, {}, 0, "--actors 0"),
    ({"CPU": 8.0}, {"device": "cuda"}, None, "--ray: the Ray cluster has 8 CPUs and 0 GPUs, room for 0 actors"),
])
def test_pool_size_that_cannot_fit_is_a_usage_error(resources, options, actors, message):
    from hierplan.errors import UsageError
    from hierplan.eval.distributed import pool_size

    with pytest.raises(UsageError, match=message):
        pool_size(resources, options, actors, 5)


def test_a_task_replayed_after_it_finished_is_answered_from_its_checkpoint(tmp_path):
    """An actor can die after its task's last checkpoint but before the driver got the record: the replay
    must not run the task again (no Ray needed: this is the actor's own logic)."""
    from hierplan.eval.distributed import EvalWorker

    log = str(tmp_path / "calls.jsonl")
    options = {"fake": {"log": log}, "split_writing": True}  # the planner plans the task's 3 steps
    db = str(tmp_path / "runs.sqlite")
    [task] = make_tasks(1)
    first = EvalWorker(options, db, FACTORY).run(task, "t-1")
    calls = len(read_log(log))
    again = EvalWorker(options, db, FACTORY).run(task, "t-1")  # another process would open the same db
    assert len(read_log(log)) == calls + 1  # only the second model_built line: no model call
    assert (first["resumed"], again["resumed"]) == (False, True)
    assert again["final"] == first["final"] == "The answer is 1." and again["steps"] == first["steps"] == 3


def test_a_task_that_kills_its_actor_every_time_is_recorded_once_as_failed(ray_cluster, tmp_path):
    """Ray replays it MAX_TASK_RETRIES times, then gives up: the task is one failed record, the others finish."""
    from hierplan.eval.distributed import MAX_TASK_RETRIES

    marker = tmp_path / "paused"
    pause = {"task": 2, "node": "llm_step", "step": 1, "marker": str(marker), "seconds": 90, "always": True}
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(records=evaluate(tmp_path, 4, {"pause": pause})),
                              daemon=True)
    thread.start()
    killed: list[int] = []
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while len(killed) < MAX_TASK_RETRIES + 1 and time.monotonic() < deadline:
        pid = json.loads(marker.read_text())["pid"] if marker.exists() else None
        if pid is not None and pid not in killed:
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    thread.join(RUN_TIMEOUT_S)
    assert len(killed) == MAX_TASK_RETRIES + 1 and not thread.is_alive()
    records = out["records"]
    assert sorted(r["index"] for r in records) == [1, 2, 3, 4]
    [failed] = [r for r in records if r["index"] == 2]
    assert failed["error"].startswith(f"its Ray actor died {MAX_TASK_RETRIES + 1} times")
    assert failed["correct"] is False and failed["final"] is None
    assert all(r["error"] is None and r["correct"] for r in records if r["index"] != 2)
