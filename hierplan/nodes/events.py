"""Live progress: nodes emit small dicts on LangGraph's custom stream (stream_mode="custom")."""

from __future__ import annotations

from typing import Any


def emit(event: str, **fields: Any) -> None:
    """Send {"event": ..., **fields} to whoever streams the graph; a no-op outside a graph run (unit tests)."""
    from langgraph.config import get_stream_writer

    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run
        return
    writer({"event": event, **fields})
