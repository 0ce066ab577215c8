"""Live events of the runs this server works on, from their threads to every browser watching (SSE).

A run's thread publishes; each open event stream is an asyncio queue on the server's loop, fed through
``call_soon_threadsafe`` (the thread never touches the loop itself). The hub also keeps the little a page
needs that the database does not have yet: the answer streamed so far and which steps are working.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

# Events after which the page re-reads the run from the database (the rest update it in place).
REFRESH_EVENTS = frozenset({"kind", "plan", "step_finished", "replan", "final", "approval_needed", "steps_started",
                            "run_started", "run_finished"})


@dataclass
class Live:
    """What a run shows between checkpoints: the text each model call streams (``token`` events) until its
    result is saved, and which steps are working."""

    status: str = "starting"
    final_text: str = ""
    working: set[int] = field(default_factory=set)
    step_text: dict[int, str] = field(default_factory=dict)
    """A working step's text so far (an LLM step's answer, a Python step's program of its latest attempt)."""
    step_attempt: dict[int, int | None] = field(default_factory=dict)
    revision: int | None = None
    """The reviser's round while it rewrites the answer (None when it is not at work)."""
    revision_text: str = ""

    def copy(self) -> "Live":
        return Live(self.status, self.final_text, set(self.working), dict(self.step_text), dict(self.step_attempt),
                    self.revision, self.revision_text)


class Hub:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Queue]]] = {}
        self._live: dict[str, Live] = {}

    def begin(self, run_id: str) -> None:
        with self._lock:
            self._live[run_id] = Live()

    def active(self, run_id: str) -> bool:
        with self._lock:
            return run_id in self._live

    def live(self, run_id: str) -> Live | None:
        with self._lock:
            live = self._live.get(run_id)
            return None if live is None else live.copy()

    def publish(self, run_id: str, event: dict[str, Any]) -> None:
        with self._lock:
            live = self._live.get(run_id)
            if live is not None:
                self._track(live, event)
            targets = list(self._subscribers.get(run_id, ()))
        for loop, queue in targets:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, event)
            except RuntimeError:  # that loop is closed: the server is stopping
                pass

    @staticmethod
    def _track(live: Live, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "status":
            live.status = event["text"]
        elif kind == "steps_started":
            live.working |= set(event["step_ids"])
            live.status = "working on step " + ", ".join(str(i) for i in event["step_ids"])
        elif kind == "step_finished":
            live.working.discard(event["step_id"])
            live.step_text.pop(event["step_id"], None)
            live.step_attempt.pop(event["step_id"], None)
        elif kind == "node_started" and event.get("node") == "aggregator":
            live.final_text, live.status = "", "writing the final answer"
        elif kind == "node_started" and event.get("node") == "reviser":
            live.revision, live.revision_text = event.get("attempt") or 1, ""
            live.status = "rewriting the answer, told what it broke"
        elif kind == "node_started" and event.get("node") == "plain_answer":
            live.revision, live.revision_text = event.get("attempt") or 1, ""
            live.status = "answering the task plainly: the rewrites were no answer"
        elif kind == "instruction_check":
            live.revision, live.revision_text = None, ""
        elif kind == "token":
            Hub._token(live, event)

    @staticmethod
    def _token(live: Live, event: dict[str, Any]) -> None:
        """A piece of streamed text, placed at its offset (a new call or attempt starts again at 0)."""
        node, step_id, offset, text = event["node"], event.get("step_id"), event["offset"], event["text"]
        if node == "aggregator":
            live.final_text = live.final_text[:offset] + text
        elif node in ("reviser", "plain_answer"):
            live.revision = event.get("attempt") or live.revision or 1
            live.revision_text = live.revision_text[:offset] + text
        elif step_id is not None and step_id in live.working:
            if live.step_attempt.get(step_id) != event.get("attempt"):
                live.step_text[step_id] = ""
            live.step_attempt[step_id] = event.get("attempt")
            live.step_text[step_id] = live.step_text.get(step_id, "")[:offset] + text

    def finish(self, run_id: str) -> None:
        """The run's thread is done: watchers get an end-of-stream marker."""
        with self._lock:
            self._live.pop(run_id, None)
        self.publish(run_id, {"event": "stream_end"})

    def subscribe(self, run_id: str) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue()
        with self._lock:
            self._subscribers.setdefault(run_id, []).append((asyncio.get_running_loop(), queue))
        return queue

    def unsubscribe(self, run_id: str, queue: asyncio.Queue) -> None:
        with self._lock:
            subs = [s for s in self._subscribers.get(run_id, []) if s[1] is not queue]
            if subs:
                self._subscribers[run_id] = subs
            else:
                self._subscribers.pop(run_id, None)
