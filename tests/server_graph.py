"""Test-only LangGraph Server factory: hierplan's real graph (through hierplan.server's own factory code) over a
scripted fast model. tests/server_fixtures.py and bench/server_load.py point a langgraph.json at
``<this file>:make_graph``; nothing in hierplan/ imports it.

configurable ``model`` picks the script:
  "scripted"         a three-step plan (python, then two llm steps) and an aggregator that quotes the task
  "scripted-slow"    the same, each llm call sleeping SLOW_SECONDS (to catch a run mid-way)
  "scripted-llm"     three llm steps, no sandbox: the fastest, for load benchmarks
  "scripted-broken"  fails to load (RuntimeError)
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fakes import ScriptedChatModel, plan_json  # noqa: E402

from hierplan.server.factory import make_factory  # noqa: E402

# Each llm step of "scripted-slow" sleeps this long ($HIERPLAN_TEST_SLOW_SECONDS overrides it).
SLOW_SECONDS = float(os.environ.get("HIERPLAN_TEST_SLOW_SECONDS", "1.5"))
# Counts model loads in this server process, so a test can ask the server (via a run) how many there were.
LOADS: list[str] = []


def final_for(name: str):
    """The aggregator's reply: the task line of its prompt (first in a numeric task's prompt, after the notes in
    another's), so every run's answer names its own task, and how
    often this server process has loaded this model."""

    def answer(messages) -> str:
        task = next(line for line in messages[-1].content.splitlines() if line.startswith("Task: ")).removeprefix(
            "Task: ")
        return f"FINAL for [{task}] (loads of {name}: {LOADS.count(name)})"

    return answer


def _slow(reply: str):
    def answer(messages):
        time.sleep(SLOW_SECONDS)
        return reply

    return answer


def scripted_model(model_options: dict) -> ScriptedChatModel:
    name = model_options.get("model", "scripted")
    if name == "scripted-broken":
        raise RuntimeError("scripted-broken cannot be loaded")
    LOADS.append(name)
    tools = ["llm", "llm", "llm"] if name == "scripted-llm" else ["python", "llm", "llm"]
    step_reply = _slow("step result") if name == "scripted-slow" else "step result"
    return ScriptedChatModel(default={
        "planner": plan_json(tools, goal="Answer the task"),
        "python_step": "```python\nprint(6 * 7)\n```",
        "llm_step": step_reply,
        "aggregator": final_for(name),
    })


make_graph = make_factory(scripted_model)
