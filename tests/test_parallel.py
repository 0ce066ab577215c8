"""Parallel steps: ready steps run together, ready LLM steps share one batched call, resume re-runs only
what did not finish."""

from __future__ import annotations

import threading

import pytest

from fakes import FakeExecution, ScriptedChatModel, plan_json
from hierplan import build_graph

CONFIG = {"configurable": {"thread_id": "par"}}
# Steps 1-3 need nothing; step 4 needs them all.
INDEPENDENT = {1: [], 2: [], 3: [], 4: [1, 2, 3]}
TASK = "Draft a plan"  # a deliverable with parts: the planner plans it with split_writing (rules.plan)


class CountingRunner:
    """A sandbox stand-in that records which code ran and how many ran at the same time."""

    def __init__(self, delay: float = 0.0):
        self.seen: list[str] = []
        self.active = self.peak = 0
        self.lock = threading.Lock()
        self.delay = delay

    def __call__(self, code: str, before=()) -> FakeExecution:
        with self.lock:
            self.seen.append(code)
            self.active += 1
            self.peak = max(self.peak, self.active)
        threading.Event().wait(self.delay)
        with self.lock:
            self.active -= 1
        return FakeExecution(True, f"ran {code}\n")


def graph_for(tools, depends, *, parallel=True, script=None, runner=None):
    model = ScriptedChatModel(script={"planner": [plan_json(tools, depends=depends)], **(script or {})},
                              default={"python_step": lambda m: f"print({len(m)})"})
    runner = runner or CountingRunner()
    return model, runner, build_graph(model=model, run_code=runner, constrain=False, parallel=parallel,
                                      split_writing=True)


def test_ready_llm_steps_share_one_batched_call_and_later_steps_wait():
    model, _, graph = graph_for(["llm", "llm", "none", "llm"], INDEPENDENT)
    out = graph.invoke({"task": TASK}, CONFIG)
    assert [r["calls"][0]["batch"] for r in out["results"]] == [3, 3, 3, 1]
    step4_prompt = model.calls[-2]["messages"][1].content
    for step_id in (1, 2, 3):
        assert f"Step {step_id} - Step {step_id}" in step4_prompt  # it saw all three results


def test_sequential_mode_runs_one_step_at_a_time():
    _, _, graph = graph_for(["llm", "llm", "none", "llm"], INDEPENDENT, parallel=False)
    out = graph.invoke({"task": TASK}, CONFIG)
    assert [r["calls"][0]["batch"] for r in out["results"]] == [1, 1, 1, 1]
    assert [r["step_id"] for r in out["results"]] == [1, 2, 3, 4]


def test_ready_python_steps_run_concurrently():
    runner = CountingRunner(delay=0.3)
    _, _, graph = graph_for(["python", "python", "python", "llm"], INDEPENDENT, runner=runner)
    out = graph.invoke({"task": TASK}, CONFIG)
    assert runner.peak == 3 and len(runner.seen) == 3
    assert all(r["ok"] for r in out["results"])


def test_sequential_python_steps_never_overlap():
    runner = CountingRunner(delay=0.05)
    _, _, graph = graph_for(["python", "python", "python", "llm"], INDEPENDENT, parallel=False, runner=runner)
    graph.invoke({"task": TASK}, CONFIG)
    assert runner.peak == 1


def test_a_crash_among_parallel_steps_reruns_only_the_unfinished_ones():
    runner = CountingRunner()
    model, _, graph = graph_for(["python", "llm", "llm", "llm"], INDEPENDENT, runner=runner,
                                script={"llm_step": [RuntimeError("batch died"), "two", "three", "four"]})
    with pytest.raises(RuntimeError, match="batch died"):
        graph.invoke({"task": TASK}, CONFIG)
    assert len(runner.seen) == 1
    out = graph.invoke(None, CONFIG)
    assert len(runner.seen) == 1  # the python step that finished was not run again
    assert model.count("python_step") == 1 and model.count("planner") == 1
    assert [r["step_id"] for r in out["results"]] == [1, 2, 3, 4] and all(r["ok"] for r in out["results"])
