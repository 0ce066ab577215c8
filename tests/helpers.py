"""Driving the `hierplan` CLI in tests and reading back what a run saved (shared by the CLI-level tests)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from hierplan import open_checkpointer
from hierplan.cli.main import main
from hierplan.store import read_checkpoint

# Runs the CLI in a subprocess with a scripted fake model (see its docstring), for kills and locks.
WORKER = str(Path(__file__).with_name("cli_worker.py"))


def cli(*argv: str) -> tuple[int, str, str]:
    """`hierplan ARGV...` in this process: (exit code, stdout, stderr); works inside or outside capsys."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def events(text: str) -> list[dict]:
    """The JSON events of `--json` output, one per line."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def one_line_error(err: str, *needles: str) -> None:
    """A user-facing failure: exactly one `hierplan: error:` line, no traceback, mentioning every needle."""
    assert err.count("\n") == 1 and err.startswith("hierplan: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


def statuses(db: str) -> dict[str, str]:
    """Run id -> status, as `hierplan runs` lists them (a run whose process is gone shows as interrupted)."""
    code, out, err = cli("runs", "--json", "--db", db)
    assert code == 0, err
    return {r["id"]: r["status"] for r in json.loads(out)}


def latest_checkpoint(db: str, run_id: str):
    """The run's latest checkpoint tuple straight from the saver (None before its first checkpoint)."""
    return open_checkpointer(db).get_tuple({"configurable": {"thread_id": run_id}})


def saved_values(db: str, run_id: str) -> dict:
    """The state values of the run's latest checkpoint ({} before its first), read as `hierplan show` reads them."""
    return read_checkpoint(open_checkpointer(db), run_id, db)


def marked_processes(marker: str) -> list[int]:
    """The live processes (not zombies) whose environment holds the marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


def assert_none_left(marker: str, within_s: float, what: str) -> None:
    """No process with the marker is left ``within_s`` seconds from now; any that is, is killed, then fails the test."""
    import os
    import signal
    import time

    deadline = time.monotonic() + within_s
    while (left := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"MCP server processes {left} outlived {what} by {within_s} s"


# A scripted Python step: reads sales.csv at ./data/, prints the total of its amounts, saves a chart and a table.
CSV_CHART_PROGRAM = """```python
import csv
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open("data/sales.csv")))
total = sum(int(r["amount"]) for r in rows)
plt.bar([r["region"] for r in rows], [int(r["amount"]) for r in rows])
plt.savefig("out/chart.png")
with open("out/sums.csv", "w") as f:
    f.write(f"total\\n{total}\\n")
print(total)
```"""


def doorway_streams(model, max_tokens: int = 12) -> list[dict]:
    """A real chat model behind the model doorway, in a one-node graph streamed as a run is (stream_mode
    "messages"): a batch of two LLM-step conversations streamed, each chunk labelled with its step, their text
    what the calls returned, greedy as unwatched; a call not streamed (a plan's, say) shows nothing."""
    from typing import TypedDict

    from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage
    from langgraph.graph import StateGraph

    from hierplan.app.events import TokenEvents
    from hierplan.config import SamplingConfig
    from hierplan.nodes.model_call import invoke_batch, invoke_model

    sampling = SamplingConfig().with_overrides(max_new_tokens=max_tokens, temperature=0.0).llm_step
    asks = [[SystemMessage("You are a helpful assistant."), HumanMessage(f"Name {what}.")]
            for what in ("three colours", "two fruits")]

    class State(TypedDict, total=False):
        texts: list[str]
        quiet: str

    def node(state: State) -> State:
        answers = invoke_batch(model, asks, sampling, node="llm_step", stream=True, step_ids=[1, 2])
        quiet, _ = invoke_model(model, asks[0], sampling, node="planner")
        return {"texts": [text for text, _ in answers], "quiet": quiet}

    graph = StateGraph(State)
    graph.add_node("llm_step", node)
    graph.set_entry_point("llm_step")
    tokens, chunks, events, done = [], [], TokenEvents(), None
    for mode, part in graph.compile().stream({}, stream_mode=["messages", "values"]):
        if mode == "messages":
            chunks.append(part[0])
            if (event := events.event(*part)) is not None:
                tokens.append(event)
        else:
            done = part
    assert {e["node"] for e in tokens} == {"llm_step"}  # the unstreamed call's reply is not in the stream
    for step_id, text in zip((1, 2), done["texts"]):
        mine = [e for e in tokens if e["step_id"] == step_id]
        assert text and "".join(e["text"] for e in mine) == text and mine[-1]["done"]
    assert all(isinstance(c, AIMessageChunk) for c in chunks)  # through the model's own _stream
    assert done["quiet"] == done["texts"][0]  # greedy: streamed or not, the same reply
    return tokens
