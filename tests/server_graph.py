"""Test-only LangGraph Server factory: hierplan's real graph (through hierplan.server's own factory code) over a
scripted fast model. tests/server_fixtures.py and bench/server_load.py point a langgraph.json at
``<this file>:make_graph``; nothing in hierplan/ imports it.

The run option ``model`` picks the script:
  "scripted"         a three-step plan (python, then two llm steps) and an aggregator that quotes the task
  "scripted-slow"    the same, each llm call sleeping SLOW_SECONDS (to catch a run mid-way)
  "scripted-llm"     three llm steps, no sandbox: the fastest, for load benchmarks
  "scripted-broken"  fails to load (RuntimeError)
  "scripted-lookup"  a plan whose first step calls the MCP test server's ``lookup`` (tests/servers/mcp_tools.py)
                     with {"topic": "atlantis"}, then two llm steps

With $HIERPLAN_TEST_CALLS set, every model call appends one JSON line there: the server's pid, the node, the
step (llm steps), "start" or "end", and the durability the graph runs with (LangGraph keeps it in the config).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fakes import ScriptedChatModel, plan_json  # noqa: E402

from hierplan.server.factory import make_factory  # noqa: E402

# Each llm step of "scripted-slow" sleeps this long ($HIERPLAN_TEST_SLOW_SECONDS overrides it).
SLOW_SECONDS = float(os.environ.get("HIERPLAN_TEST_SLOW_SECONDS", "1.5"))
# Counts model loads in this server process, so a test can ask the server (via a run) how many there were.
LOADS: list[str] = []
CALLS_ENV = "HIERPLAN_TEST_CALLS"
STEP_RE = re.compile(r"^Step (\d+): ", re.MULTILINE)


def logged(node: str, reply):
    """``reply`` (text or callable) with a line in $HIERPLAN_TEST_CALLS before and after each call."""
    def answer(messages):
        entry = {"pid": os.getpid(), "node": node, "durability": _durability()}
        if node in ("llm_step", "python_step") and (found := STEP_RE.search(str(messages[-1].content))):
            entry["step"] = int(found.group(1))
        _log({**entry, "at": "start"})
        text = reply(messages) if callable(reply) else reply
        _log({**entry, "at": "end"})
        return text

    return answer


def _durability() -> str | None:
    from langgraph.config import get_config

    try:
        return get_config()["configurable"].get("__pregel_durability")  # where Pregel keeps the run's durability
    except RuntimeError:  # called outside a graph run
        return None


def _log(entry: dict) -> None:
    if path := os.environ.get(CALLS_ENV):
        with open(path, "a", encoding="utf-8") as f:  # one short append per line: lines do not interleave
            f.write(json.dumps(entry) + "\n")


def final_for(name: str):
    """The aggregator's reply: the task line of its prompt (first in a numeric task's prompt, after the notes in
    another's; one piece's draft is the task alone), so every run's answer names its own task, and how
    often this server process has loaded this model."""

    def answer(messages) -> str:
        lines = messages[-1].content.splitlines()
        task = next((line.removeprefix("Task: ") for line in lines if line.startswith("Task: ")), messages[-1].content)
        return f"FINAL for [{task}] (loads of {name}: {LOADS.count(name)})"

    return answer


def _slow(reply: str):
    def answer(messages):
        time.sleep(SLOW_SECONDS)
        return reply

    return answer


def scripted_model(options) -> ScriptedChatModel:
    name = options.model or "scripted"
    if name == "scripted-broken":
        raise RuntimeError("scripted-broken cannot be loaded")
    LOADS.append(name)
    tools = {"scripted-llm": ["llm", "llm", "llm"], "scripted-lookup": ["lookup", "llm", "llm"]}.get(
        name, ["python", "llm", "llm"])
    step_reply = _slow("step result") if name == "scripted-slow" else "step result"
    replies = {"planner": plan_json(tools, goal="Answer the task"), "python_step": "```python\nprint(6 * 7)\n```",
               "llm_step": step_reply, "tool_step": '{"topic": "atlantis"}', "aggregator": final_for(name)}
    return ScriptedChatModel(default={node: logged(node, reply) for node, reply in replies.items()})


make_graph = make_factory(scripted_model)
