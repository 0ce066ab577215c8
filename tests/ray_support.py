"""Shared by the Ray tests: a real local Ray cluster (fixture ``ray_cluster``, one per test module that imports
it), an evaluation through ``run_eval_on_ray`` writing results.jsonl as the CLI does, and the kill scenario
(an actor SIGKILLed while its task blocks in a step), run on any run database."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from hierplan.eval.report import ResultsWriter, read_results
from hierplan.eval.tasks import EvalTask
from needs import unavailable
from ray_models import question, read_log

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FACTORY = "ray_models:scripted"
RUN_TIMEOUT_S = 120
KILLED_TASK, KILLED_STEP = 3, 2


@pytest.fixture(scope="module")
def ray_cluster():
    try:
        import ray
    except ImportError:
        unavailable("ray is not installed (pip install 'hierplan[ray]')")
    # A new cluster (address="local"), never one a user started; its actor processes import ray_models
    # (tests/) and this checkout of hierplan.
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), str(REPO)]), "HF_HUB_OFFLINE": "1"}
    ray.init(address="local", num_cpus=2, runtime_env={"env_vars": env}, include_dashboard=False,
             log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def make_tasks(n: int) -> list[EvalTask]:
    return [EvalTask(i, question(i), None, str(i)) for i in range(1, n + 1)]


def evaluate(folder: Path, n: int, fake: dict, db: str | None = None) -> list[dict]:
    """run_eval_on_ray over n tasks (2 actors, threads t-1..t-n) with results.jsonl written as the CLI
    does; returns the file's records."""
    from hierplan.eval.distributed import run_eval_on_ray

    writer = ResultsWriter(folder / "results.jsonl")
    try:
        # split_writing: each question names parts ("steps"), and the planner plans it (ray_models.question)
        run_eval_on_ray(make_tasks(n), {"fake": fake, "split_writing": True}, db=db or str(folder / "runs.sqlite"),
                        actors=2, model_factory=FACTORY, thread_prefix="t", on_result=lambda r, *_: writer.write(r))
    finally:
        writer.close()
    return read_results(folder / "results.jsonl")


def assert_each_task_once_and_right(records: list[dict], n: int) -> None:
    assert sorted(r["index"] for r in records) == list(range(1, n + 1))
    for r in records:
        assert r["error"] is None, r
        assert r["final"] == f"The answer is {r['index']}." and r["correct"] is True
        assert r["thread_id"] == f"t-{r['index']}"


def kill_mid_task(folder: Path, n: int, db: str | None = None) -> tuple[list[dict], int, list[dict]]:
    """Evaluate n tasks; when task KILLED_TASK blocks in step KILLED_STEP's model call, SIGKILL the actor
    running it. Returns (results.jsonl records, the killed pid, the model-call log of every process)."""
    log, marker = str(folder / "calls.jsonl"), folder / "paused"
    pause = {"task": KILLED_TASK, "node": "llm_step", "step": KILLED_STEP, "marker": str(marker), "seconds": 90}
    out: dict = {}

    def run() -> None:
        try:
            out["records"] = evaluate(folder, n, {"log": log, "pause": pause}, db)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not marker.exists() and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    assert marker.exists(), out.get("error") or f"task {KILLED_TASK} never reached step {KILLED_STEP}"
    killed = json.loads(marker.read_text())["pid"]
    os.kill(killed, signal.SIGKILL)
    thread.join(RUN_TIMEOUT_S)
    assert not thread.is_alive() and "error" not in out, out.get("error")
    return out["records"], killed, read_log(log)


def assert_resumed_not_restarted(records: list[dict], killed: int, log: list[dict], n: int) -> None:
    """Every task once; the killed task finished in another process, its finished model calls not repeated."""
    assert_each_task_once_and_right(records, n)  # once each, none lost, none duplicated
    [victim] = [r for r in records if r["index"] == KILLED_TASK]
    assert victim["resumed"] is True and victim["worker"]["pid"] != killed
    assert not any(r["resumed"] for r in records if r["index"] != KILLED_TASK)
    # Its model calls across both processes: planning and step 1 ran once (before the kill, in the killed
    # actor); step 2 ran in the killed actor (where it blocked) and once more in the restarted one.
    calls = [(e["node"], e["step"], e["pid"] == killed) for e in log if e.get("task") == KILLED_TASK]
    assert calls == [("planner", None, True), ("llm_step", 1, True), ("llm_step", 2, True),
                     ("llm_step", 2, False), ("llm_step", 3, False), ("aggregator", None, False)]
    assert len([e for e in log if e["event"] == "model_built"]) == 3  # 2 actors + the restarted one
