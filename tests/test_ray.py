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
from pathlib import Path

import pytest

from helpers import cli, one_line_error
from hierplan.eval.report import ResultsWriter, read_results
from hierplan.eval.tasks import EvalTask
from needs import unavailable
from ray_models import question, read_log

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FACTORY = "ray_models:scripted"
RUN_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def ray_cluster():
    try:
        import ray
    except ImportError:
        unavailable("ray is not installed (pip install 'hierplan[ray]')")
    # The actor processes import ray_models (tests/) and this checkout of hierplan.
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), str(REPO)]), "HF_HUB_OFFLINE": "1"}
    ray.init(address="local", num_cpus=2, runtime_env={"env_vars": env}, include_dashboard=False,
             log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def make_tasks(n: int) -> list[EvalTask]:
    return [EvalTask(i, question(i), None, str(i)) for i in range(1, n + 1)]


def evaluate(tmp_path: Path, n: int, fake: dict, **kwargs) -> list[dict]:
    """run_eval_on_ray with results.jsonl written as the CLI does; returns the file's records."""
    from hierplan.eval.distributed import run_eval_on_ray

    writer = ResultsWriter(tmp_path / "results.jsonl")
    try:
        run_eval_on_ray(make_tasks(n), {"fake": fake}, db=str(tmp_path / "runs.sqlite"), actors=2,
                        model_factory=FACTORY, thread_prefix="t", on_result=lambda r, *_: writer.write(r),
                        **kwargs)
    finally:
        writer.close()
    return read_results(tmp_path / "results.jsonl")


def assert_each_task_once_and_right(records: list[dict], n: int) -> None:
    assert sorted(r["index"] for r in records) == list(range(1, n + 1))
    for r in records:
        assert r["error"] is None, r
        assert r["final"] == f"The answer is {r['index']}." and r["correct"] is True
        assert r["thread_id"] == f"t-{r['index']}"


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
    log, marker = str(tmp_path / "calls.jsonl"), tmp_path / "paused"
    pause = {"task": 3, "node": "llm_step", "step": 2, "marker": str(marker), "seconds": 90}
    out: dict = {}

    def run() -> None:
        try:
            out["records"] = evaluate(tmp_path, 6, {"log": log, "pause": pause})
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not marker.exists() and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    assert marker.exists(), out.get("error") or "task 3 never reached its step 2"
    killed = json.loads(marker.read_text())["pid"]
    os.kill(killed, signal.SIGKILL)
    thread.join(RUN_TIMEOUT_S)
    assert not thread.is_alive() and "error" not in out, out.get("error")

    records = out["records"]
    assert_each_task_once_and_right(records, 6)  # once each, none lost, none duplicated
    [third] = [r for r in records if r["index"] == 3]
    assert third["resumed"] is True and third["worker"]["pid"] != killed
    assert [r["resumed"] for r in records if r["index"] != 3] == [False] * 5

    # Task 3's model calls across both processes: planning and step 1 ran once (before the kill, in the
    # killed actor); step 2 ran in the killed actor (where it blocked) and once more in the new one.
    calls = [(e["node"], e["step"], e["pid"]) for e in read_log(log) if e.get("task") == 3]
    assert [(node, step) for node, step, _ in calls] == [
        ("planner", None), ("llm_step", 1), ("llm_step", 2), ("llm_step", 2), ("llm_step", 3), ("aggregator", None)]
    assert [pid == killed for *_, pid in calls] == [True, True, True, False, False, False]
    assert len([e for e in read_log(log) if e["event"] == "model_built"]) == 3  # the restarted actor's

    from hierplan import open_checkpointer
    from hierplan.store import read_checkpoint

    saved = read_checkpoint(open_checkpointer(str(tmp_path / "runs.sqlite")), "t-3", "runs.sqlite")
    assert [r["step_id"] for r in saved["results"]] == [1, 2, 3]


def test_cli_eval_with_ray_writes_every_task_once(ray_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("HIERPLAN_MODEL_FACTORY", FACTORY)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"question": question(i), "answer": f"#### {i}"}) + "\n"
                             for i in range(1, 5)))
    code, stdout, err = cli("eval", str(tasks), "--ray", "--actors", "2", "--db", str(tmp_path / "runs.sqlite"),
                            "--out", str(tmp_path / "out"), "--json")
    assert code == 0, err
    assert json.loads(stdout)["correct"] == 4
    records = read_results(tmp_path / "out" / "results.jsonl")
    assert sorted(r["index"] for r in records) == [1, 2, 3, 4]
    assert len({r["worker"]["pid"] for r in records}) == 2


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
             "import hierplan.eval, hierplan.eval.harness, hierplan.eval.distributed, hierplan.cli.eval_cmd\n"
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
    options = {"fake": {"log": log}}
    db = str(tmp_path / "runs.sqlite")
    [task] = make_tasks(1)
    first = EvalWorker(options, db, FACTORY).run(task, "t-1")
    calls = len(read_log(log))
    again = EvalWorker(options, db, FACTORY).run(task, "t-1")  # another process would open the same db
    assert len(read_log(log)) == calls + 1  # only the second model_built line: no model call
    assert (first["resumed"], again["resumed"]) == (False, True)
    assert again["final"] == first["final"] == "The answer is 1." and again["steps"] == first["steps"] == 3
