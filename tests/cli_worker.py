"""Run the `hierplan` CLI in a subprocess with a scripted fake model, for crash and concurrency tests.

Usage: python tests/cli_worker.py HIERPLAN-ARGV...   (exits with main()'s return code)

Configured by environment variables:

- HIERPLAN_WORKER_SPEC: JSON, all keys optional:
    {"plan": ["llm", "python", ...],        # the planner's reply (plan_json of these tools)
     "code": "print(42)",                    # every python_step reply
     "pause": {"at": "planner" | "llm_step" | "python_step" | "aggregator" | "scheduler" | "sandbox",
               "step": 3,                    # llm_step/python_step: which step; scheduler: which call (1-based)
               "seconds": 30},               # how long to sleep once the marker is written
     "busy_timeout_ms": 300,                 # hierplan.store.sqlite.BUSY_TIMEOUT_MS for this process
     "tag": "run-a",                         # llm_step replies are "run-a: answer for step N"
     "tool_args": {"seconds": 30},           # every tool_step reply (a registered tool's arguments, as JSON)
     "fail": {"at": "llm_step", "step": 2, "message": "boom"},   # raise RuntimeError(message) there
     "final": "The answer is 51.",           # the aggregator's reply (default "FINAL ANSWER")
     "add_to_earlier": true}                 # every program (a step's, the checker's) prints the number the
                                             # request adds ("add 100") plus the last number of the earlier turn's
                                             # answer its request shows ("Your answer: ... 51"): a model that reads
                                             # the conversation
  "sandbox" pauses nothing itself: it writes the marker as soon as the sandbox process is spawned.
- HIERPLAN_WORKER_DIR: folder for the marker file ``paused`` (written when the pause point is reached).
- HIERPLAN_WORKER_CALLS: file where the list of model calls (node, step) is rewritten as JSON after each call.
- HIERPLAN_WORKER_REAL=1: no fake model at all (the embedded model; for real-model kills).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

_lock = threading.Lock()
_calls: list[dict] = []


def _write_json(path: str, data) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def marker(kind: str, **extra) -> None:
    folder = os.environ.get("HIERPLAN_WORKER_DIR")
    if folder:
        _write_json(os.path.join(folder, "paused"), {"at": kind, "pid": os.getpid(), **extra})


def _step_of(messages) -> int | None:
    m = re.search(r"^Step (\d+): ", messages[-1].content, re.MULTILINE)
    return int(m.group(1)) if m else None


def _add_to_earlier(request: str) -> str:
    """The program of a model that reads the conversation: the earlier answer's last number plus what is added."""
    from hierplan.nodes import prompts

    earlier = re.findall(r"^Your answer: .*?(-?\d+(?:\.\d+)?)\D*$", request, re.MULTILINE)
    asked_now = prompts.TASK_IN_CONVERSATION.split("{task}")[0].split("\n")[-1]  # "The user's request now ...: "
    added = re.findall(r"add (-?\d+)", request.rsplit(asked_now, 1)[-1]) if asked_now in request else []
    if not earlier or not added:
        return "print('no earlier answer in the request')"
    return f"```python\nprint({earlier[-1]} + {added[-1]})\n```"


def install_fake(spec: dict) -> None:
    from fakes import ScriptedChatModel, plan_json

    import hierplan.models

    pause = spec.get("pause") or {}
    fail = spec.get("fail") or {}
    calls_file = os.environ.get("HIERPLAN_WORKER_CALLS")
    plan_text = plan_json(spec.get("plan") or ["llm", "python", "llm", "llm"])
    code = spec.get("code", "print(42)")
    tag = f"{spec['tag']}: " if spec.get("tag") else ""

    def hit(point: dict, node: str, step: int | None) -> bool:
        return point.get("at") == node and point.get("step") in (None, step)

    def reply(node: str):
        def answer(messages) -> str:
            step = _step_of(messages) if node in ("llm_step", "python_step") else None
            with _lock:
                _calls.append({"node": node, "step": step})
                if calls_file:
                    _write_json(calls_file, _calls)
            if hit(fail, node, step):
                raise RuntimeError(fail.get("message", "scripted failure"))
            if hit(pause, node, step):
                marker(node, step=step)
                time.sleep(pause.get("seconds", 30))
            if node == "planner":
                return plan_text
            if node in ("python_step", "python_check") and spec.get("add_to_earlier"):
                return _add_to_earlier(messages[-1].content)
            if node == "python_step":
                return code
            if node == "tool_step":
                return json.dumps(spec.get("tool_args") or {})
            if node == "aggregator":
                return spec.get("final", "FINAL ANSWER")
            return f"{tag}answer for step {step}"
        return answer

    def fake_load(model=None, **kwargs):
        default = {n: reply(n) for n in ("planner", "planner_retry", "llm_step", "python_step", "python_check",
                                         "tool_step", "aggregator")}
        return ScriptedChatModel(default=default)

    hierplan.models.load_chat_model = fake_load

    if pause.get("at") == "scheduler":
        import hierplan.graph.builder as builder

        real_scheduler = builder.scheduler
        seen = {"n": 0}

        def scheduler(state):
            seen["n"] += 1
            if seen["n"] == pause.get("step", 1):
                marker("scheduler", results=[r["step_id"] for r in state.get("results") or []])
                time.sleep(pause.get("seconds", 30))
            return real_scheduler(state)

        builder.scheduler = scheduler

    if pause.get("at") == "sandbox":
        import subprocess
        import types

        from hierplan.tools.sandbox import runner

        def popen(*args, **kwargs):
            proc = subprocess.Popen(*args, **kwargs)
            marker("sandbox", sandbox_pid=proc.pid)
            return proc

        proxy = types.SimpleNamespace(**{k: getattr(subprocess, k) for k in dir(subprocess) if not k.startswith("__")})
        proxy.Popen = popen
        runner.subprocess = proxy  # only the sandbox runner's spawns are marked


def main() -> int:
    spec = json.loads(os.environ.get("HIERPLAN_WORKER_SPEC") or "{}")
    if "busy_timeout_ms" in spec:  # a locked database fails fast instead of after 30 s
        import hierplan.store.sqlite

        hierplan.store.sqlite.BUSY_TIMEOUT_MS = spec["busy_timeout_ms"]
    if os.environ.get("HIERPLAN_WORKER_REAL") != "1":
        install_fake(spec)
    from hierplan.cli.main import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skip interpreter teardown (threads of the model stack); the exit code is what counts
