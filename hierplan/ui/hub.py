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
    """What a run shows between checkpoints."""

    status: str = "starting"
    final_text: str = ""
    working: set[int] = field(default_factory=set)


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
            return None if live is None else Live(live.status, live.final_text, set(live.working))

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
        elif kind == "node_started" and event.get("node") == "aggregator":
            live.final_text, live.status = "", "writing the final answer"
        elif kind == "final_token":
            live.final_text += event["text"]

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
