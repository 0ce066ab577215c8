"""Model factories for the Ray tests and bench: importable by Ray's actor processes ("ray_models:scripted").

Every actor builds its model with ``scripted(options)``; ``options["fake"]`` says what it does:

    {"log": "/tmp/x/calls.jsonl",   # one line per model built and per model call: {"pid", "event", ...}
     "plan": ["llm", "llm", "llm"], # the planner's reply (plan_json of these tools; steps in sequence)
     "pause": {"task": 3, "node": "llm_step", "step": 2,   # block in this call of this task ...
               "marker": "/tmp/x/paused", "seconds": 60}}  # ... once: write the marker (pid), then sleep

The pause happens once across all processes (the marker file says it already happened), so the task,
replayed on a restarted actor, runs through; with ``"always": true`` it happens on every attempt (the
marker is rewritten each time, with the new pid).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import ScriptedChatModel, plan_json  # noqa: E402

TASK_RE = re.compile(r"\btask-(\d+)\b")
STEP_RE = re.compile(r"^Step (\d+): ", re.MULTILINE)


def _append(path: str | None, entry: dict) -> None:
    if path:  # one short write per line in append mode: lines from several processes do not interleave
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"pid": os.getpid(), "time": time.time(), **entry}) + "\n")


def read_log(path: str | Path) -> list[dict]:
    p = Path(path)
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()] if p.exists() else []


def question(index: int) -> str:
    """Task ``index``'s question: it names parts ("steps"), so in a run with split_writing the planner plans it
    (one piece of writing is planned by rule, rules.plan) and its steps run."""
    return f"task-{index}: do the thing number {index} in steps"


def scripted(options: dict) -> ScriptedChatModel:
    fake = options.get("fake") or {}
    log, pause = fake.get("log"), fake.get("pause") or {}
    plan_text = plan_json(fake.get("plan") or ["llm", "llm", "llm"])
    _append(log, {"event": "model_built"})

    def reply(node: str):
        def answer(messages) -> str:
            text = "\n".join(str(m.content) for m in messages)
            found = TASK_RE.search(text)
            task = int(found.group(1)) if found else None
            step_found = STEP_RE.search(str(messages[-1].content)) if node == "llm_step" else None
            step = int(step_found.group(1)) if step_found else None
            _append(log, {"event": "call", "task": task, "node": node, "step": step})
            if (pause and pause.get("task") == task and pause.get("node") == node
                    and pause.get("step") in (None, step)
                    and (pause.get("always") or not os.path.exists(pause["marker"]))):
                Path(pause["marker"]).write_text(json.dumps({"pid": os.getpid(), "task": task, "step": step,
                                                             "time": time.time()}))
                time.sleep(pause.get("seconds", 60))
            if node in ("planner", "planner_retry"):
                return plan_text
            if node == "aggregator":
                return f"The answer is {task}."
            return f"answer for step {step}"
        return answer

    return ScriptedChatModel(default={n: reply(n) for n in ("planner", "planner_retry", "llm_step", "aggregator")})


def missing(options: dict):
    """A model that cannot be found: every actor fails to start with this user error."""
    from hierplan.errors import ModelNotFoundError

    raise ModelNotFoundError(f"no model named {options.get('model')!r} here")
