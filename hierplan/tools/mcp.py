"""The tools of MCP servers, through langchain-mcp-adapters (the ``mcp`` extra), from the usual configuration file:

    {"mcpServers": {"files": {"command": "python", "args": ["server.py"], "env": {"KEY": "value"}},
                    "remote": {"url": "http://127.0.0.1:8000/mcp", "transport": "streamable_http"}}}

A server with a ``command`` is started over stdio, one with a ``url`` is reached over streamable HTTP (or SSE with
``"transport": "sse"``). The adapters open a session for each tool call and close it after, so a stdio server's
process lives only as long as one call (and listing its tools at the start of a run); a call cancelled at its
time limit closes its session too. A hierplan killed mid-call leaves no server behind: each stdio server is
started through mcp_launch.py, which gives it the parent-death signal (tests/test_mcp.py kills hierplan with
SIGKILL in a call).

Imports nothing heavy until tools are loaded.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Coroutine

from hierplan.config import MCP_LOAD_TIMEOUT_S
from hierplan.errors import UsageError

# The transports a configuration may name, as the adapters name them.
TRANSPORTS = {"stdio": "stdio", "streamable_http": "streamable_http", "streamable-http": "streamable_http",
              "http": "streamable_http", "sse": "sse"}
# Keys passed on to the adapters beside the transport, per transport; others (a client's own, like "disabled")
# are ignored.
_STDIO_KEYS = ("command", "args", "env", "cwd")
_HTTP_KEYS = ("url", "headers")


def read_config(path: str | Path) -> dict[str, dict[str, Any]]:
    """The file's servers as the adapters' connections, by name; a bad file is one UsageError line."""
    where = f"--mcp {path}"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{where}: a directory, not a JSON file") from None
    except OSError as exc:
        raise UsageError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{where}: not valid JSON ({exc})") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise UsageError(f'{where}: expected {{"mcpServers": {{"NAME": {{"command": ..., "args": [...]}}, ...}}}}')
    return {name: _connection(where, name, spec) for name, spec in servers.items()}


def _connection(where: str, name: str, spec: Any) -> dict[str, Any]:
    server = f"{where}: server {name!r}"
    if not isinstance(spec, dict):
        raise UsageError(f"{server} must be a JSON object")
    if "command" not in spec and "url" not in spec:
        raise UsageError(f'{server} has no "command" (a server over stdio) or "url" (over HTTP)')
    asked = spec.get("transport") or spec.get("type") or ("stdio" if "command" in spec else "streamable_http")
    transport = TRANSPORTS.get(str(asked).lower())
    if transport is None:
        raise UsageError(f"{server}: unknown transport {asked!r} (use stdio, streamable_http or sse)")
    if transport == "stdio":
        if not isinstance(spec.get("command"), str) or not spec["command"]:
            raise UsageError(f'{server}: "command" must be the program to start')
        if not isinstance(spec.get("args", []), list) or not all(isinstance(a, str) for a in spec.get("args", [])):
            raise UsageError(f'{server}: "args" must be a list of strings')
        env = spec.get("env")
        if env is not None and (not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values())):
            raise UsageError(f'{server}: "env" must map names to strings')
        return {"transport": "stdio", "args": [], **{k: spec[k] for k in _STDIO_KEYS if k in spec}}
    if not isinstance(spec.get("url"), str) or not spec["url"].startswith(("http://", "https://")):
        raise UsageError(f'{server} has no http(s) "url"')
    return {"transport": transport, **{k: spec[k] for k in _HTTP_KEYS if k in spec}}


def load_tools(path: str | Path) -> list[Any]:
    """The LangChain tools of every server in the file, each server listed within MCP_LOAD_TIMEOUT_S; a bad
    file, a server that does not start or answer, or two tools of one name are one UsageError line."""
    connections = read_config(path)
    try:
        from langchain_mcp_adapters.client import MultiServerMCPClient
    except ImportError as exc:
        raise UsageError(f"--mcp needs {exc.name}: pip install 'hierplan[mcp]'") from None

    from hierplan.schema import check_tool_names
    from hierplan.tools.registered import describe_error

    # handle_tool_errors=False: a tool's own error (isError) raises, so the step records a failure, not a reply.
    client = MultiServerMCPClient({name: _dying_with_hierplan(c) for name, c in connections.items()},
                                  handle_tool_errors=False)

    async def listed(name: str) -> list[Any]:
        try:
            return await asyncio.wait_for(client.get_tools(server_name=name), MCP_LOAD_TIMEOUT_S)
        except (TimeoutError, asyncio.TimeoutError):
            raise UsageError(f"--mcp {path}: server {name!r} listed no tools within {MCP_LOAD_TIMEOUT_S:g} s") from None
        except Exception as exc:  # noqa: BLE001 - a server that does not start, or answers wrongly
            raise UsageError(f"--mcp {path}: server {name!r} could not be reached: {describe_error(exc)}") from None

    async def every() -> list[Any]:
        return [tool for name in connections for tool in await listed(name)]

    tools = run_coroutine(every)
    try:
        check_tool_names([t.name for t in tools])
    except ValueError as exc:
        raise UsageError(f"--mcp {path}: {exc}") from None
    return tools


def _dying_with_hierplan(connection: dict[str, Any]) -> dict[str, Any]:
    """A stdio server's command, started through mcp_launch.py (the parent-death signal); others as they are."""
    if connection["transport"] != "stdio":
        return connection
    launcher = str(Path(__file__).with_name("mcp_launch.py"))
    return {**connection, "command": sys.executable,
            "args": ["-I", "-S", launcher, str(os.getpid()), connection["command"], *connection["args"]]}


def run_coroutine(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """``asyncio.run`` in a thread of its own: the caller may itself be inside an event loop (a server)."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="hierplan-mcp", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
