"""A tiny MCP server for the tests, written with mcp's FastMCP: over stdio by default, over streamable HTTP with
``--http PORT`` (on 127.0.0.1, path /mcp).

Tools: ``lookup`` (facts no model knows), ``add``, ``fail`` (an MCP tool error), ``slow`` (writes its process id to
$MCP_TEST_PID_FILE, then sleeps: the kill tests wait for that file).
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.fastmcp import FastMCP

FACTS = {"atlantis": "The capital of Atlantis is Poseidonia (population 7,301).",
         "zorblat": "A zorblat is worth 17 quibs."}

server = FastMCP("hierplan-test", log_level="WARNING")


@server.tool()
def lookup(topic: str) -> str:
    """Look up the facts this server knows about a topic (atlantis, zorblat)."""
    try:
        return FACTS[topic.strip().lower()]
    except KeyError:
        raise ValueError(f"no facts about {topic!r}; known topics: {', '.join(FACTS)}") from None


@server.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@server.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    raise RuntimeError(message)


@server.tool()
def slow(seconds: float) -> str:
    """Sleep for some seconds, then say so."""
    if path := os.environ.get("MCP_TEST_PID_FILE"):
        with open(path + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(path + ".tmp", path)
    time.sleep(seconds)
    return f"slept {seconds} s"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.settings.host, server.settings.port = "127.0.0.1", int(sys.argv[2])
        server.run(transport="streamable-http")
    else:
        server.run()
