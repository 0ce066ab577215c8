"""The tools of MCP servers, through langchain-mcp-adapters (the ``mcp`` extra), from the usual configuration file:

    {"mcpServers": {"files": {"command": "python", "args": ["server.py"], "env": {"KEY": "value"}},
                    "remote": {"url": "http://127.0.0.1:8000/mcp", "transport": "streamable_http"}}}

A server with a ``command`` is started over stdio, one with a ``url`` is reached over streamable HTTP (or SSE with
``"transport": "sse"``). ``load_tools`` opens one session per server (``MultiServerMCPClient.session``) and keeps
it for as long as the tools it returns: a stdio server's process is started once, not for each call (starting a
Python server costs more than half a second; issue 31's target is a tool step's overhead within 5 %). The
sessions live on an event loop of their own, in a thread that McpSessions owns, and every call of their tools
runs on it (registered.call_tool hands the call over with its time limit). A call cancelled at its limit leaves
the session open; a call that fails for another reason than the tool's own error (the server died, the
connection broke) is a failed step, and the next call opens a new session (a new process). ``close()`` on the
returned McpTools ends the sessions and their servers: the run service and ``hierplan eval`` call it when the
run or the evaluation ends, and it runs at interpreter exit for tools nobody closed (a LangGraph Server lists
its tools once per graph and keeps them).

A hierplan killed mid-run (``kill -9`` included) leaves no server behind: each stdio server is started through
mcp_launch.py, which gives it the parent-death signal, sent when the sessions' thread ends (tests/test_mcp.py
kills hierplan with SIGKILL in a call).

Imports nothing heavy until tools are loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from hierplan.config import MCP_LOAD_TIMEOUT_S
from hierplan.errors import UsageError

if TYPE_CHECKING:
    from hierplan.tools.mcp_sessions import McpSessions

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
    return servers_config(data, where)


def servers_config(data: Any, where: str = "mcp_servers") -> dict[str, dict[str, Any]]:
    """The servers of a configuration as the file holds it (``{"mcpServers": {NAME: {...}}}``) as the adapters'
    connections, by name; anything else is one UsageError line that starts with ``where``."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise UsageError(f'{where}: expected {{"mcpServers": {{"NAME": {{"command": ..., "args": [...]}}, ...}}}}')
    return {name: _connection(where, name, spec) for name, spec in servers.items()}


def chosen(connections: dict[str, dict[str, Any]], names: str | None, where: str) -> dict[str, dict[str, Any]]:
    """The connections ``names`` chooses (comma-separated server names; None or empty: all), in the file's
    order; a name the file does not have is one UsageError line listing those it has."""
    wanted = [n.strip() for n in (names or "").split(",") if n.strip()]
    if not wanted:
        return connections
    unknown = [n for n in wanted if n not in connections]
    if unknown:
        raise UsageError(f"mcp_servers names {', '.join(map(repr, unknown))}, which {where} does not have "
                         f"(it has {', '.join(connections)})")
    return {n: c for n, c in connections.items() if n in wanted}


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


def load_tools(path: str | Path, names: str | None = None) -> McpTools:
    """The LangChain tools of every server in the file (only those ``names`` chooses, comma-separated, where
    given), bound to one session per server (each opened and listed within MCP_LOAD_TIMEOUT_S), as an McpTools
    to close when the run ends; a bad file, an unknown name, a server that does not start or answer, or two
    tools of one name are one UsageError line (and nothing is left open)."""
    where = f"--mcp {path}"
    return _load(chosen(read_config(path), names, where), where)


def load_servers(servers: dict[str, Any], where: str = "mcp_servers") -> McpTools:
    """As load_tools, from the configuration itself (the file's shape, as a dict: build_graph's
    ``mcp_servers``)."""
    return _load(servers_config(servers, where), where)


def _load(connections: dict[str, dict[str, Any]], where: str) -> McpTools:
    try:
        import langchain_mcp_adapters.client  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"{where} needs {exc.name}: pip install 'hierplan[mcp]'") from None

    from hierplan.schema import check_tool_names
    from hierplan.tools.mcp_sessions import McpSessions

    sessions = McpSessions(connections, where=where)
    try:
        tools = McpTools(sessions.open(), sessions)
        try:
            check_tool_names([t.name for t in tools])
        except ValueError as exc:
            raise UsageError(f"{where}: {exc}") from None
    except BaseException:
        sessions.close()
        raise
    return tools


class McpTools(list):
    """What ``load_tools`` gives: a list of LangChain tools (what ``build_graph(tools=...)`` takes) whose calls
    run on ``sessions``; ``close()`` ends them and their servers (also at interpreter exit). A context manager:
    ``with load_tools(path) as tools: ...``."""

    def __init__(self, tools: Iterable[Any], sessions: McpSessions):
        super().__init__(tools)
        self.sessions = sessions

    def close(self) -> None:
        self.sessions.close()

    def __enter__(self) -> McpTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
