"""The MCP sessions behind load_tools' tools (hierplan.tools.mcp): one session per server on an event loop thread
of their own, opened once, every call of a server's tools run on that loop, closed with the run (and at exit).
A stdio server is started through mcp_launch.py, so it dies with hierplan (kill -9 included).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from hierplan import processes
from hierplan.config import MCP_CLOSE_TIMEOUT_S, MCP_LOAD_TIMEOUT_S
from hierplan.errors import UsageError


CLOSED = "the MCP servers' sessions were closed"


@dataclass(eq=False)
class _Server:
    """One server's session, while it is open: the task that holds it (``async with`` must be left by the task
    that entered it) and the adapters' tools bound to it."""

    name: str
    session: Any = None
    """The open ClientSession; None before the first open, and after it broke or was closed."""
    tools: dict[str, Any] = field(default_factory=dict)
    stop: asyncio.Event | None = None
    """Set to end the holder's session."""
    holder: asyncio.Task | None = None
    calls: dict[asyncio.Task, Any] = field(default_factory=dict)
    """The calls in flight, by task: the session each was sent on."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One open at a time: calls that find the session broken at once open one new session, not several."""
    pid: int | None = None
    """A stdio server's process id, as its launcher wrote it when the session opened; None for other servers."""


class McpSessions:
    """One session per MCP server, on an event loop in a thread of its own, from ``open()`` to ``close()``.

    A session is held open by a task on that loop; the tools are the adapters' tools of that session, wrapped so
    that a call finds the server's current session (opened again after one broke) and runs on the loop, whoever
    awaits it. The loop's thread starts every stdio server, so their parent-death signal comes when it ends."""

    def __init__(self, connections: dict[str, dict[str, Any]], where: str):
        from langchain_mcp_adapters.client import MultiServerMCPClient

        self._pid_dir = tempfile.TemporaryDirectory(prefix="hierplan-mcp-")
        self._numbers = {name: i for i, name in enumerate(connections)}  # a server's name may hold any character
        # handle_tool_errors=False: a tool's own error (isError) raises, so the step records a failure, not a reply.
        self._client = MultiServerMCPClient({name: _dying_with_hierplan(c, self._pid_file(name))
                                             for name, c in connections.items()}, handle_tool_errors=False)
        self._where = where
        self._servers = {name: _Server(name) for name in connections}
        self._holders: set[asyncio.Task] = set()
        self._dropped: dict[asyncio.Task, Exception] = {}
        """Calls cancelled because their session ended under them, with what each raises instead."""
        self._closing = threading.Lock()
        self.closed = False
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="hierplan-mcp", daemon=True)
        self._thread.start()
        atexit.register(self.close)  # tools nobody closed: their servers end with the interpreter, not after it

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:  # what close() could not end: cancelled, so that no caller waits on it until its time limit
            left = asyncio.all_tasks(self.loop)
            for task in left:
                task.cancel()
            if left:
                self.loop.run_until_complete(asyncio.wait(left, timeout=MCP_CLOSE_TIMEOUT_S))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def _pid_file(self, server_name: str) -> Path:
        """Where a stdio server's launcher writes its process id, each time it starts one."""
        return Path(self._pid_dir.name) / f"server-{self._numbers[server_name]}.pid"

    # --- opening --------------------------------------------------------------------------------------------
    def open(self) -> list[Any]:
        """Open every server's session and list its tools, all servers at once; the tools, bound to these
        sessions, in the file's order. A server that does not start or answer is a UsageError."""
        return asyncio.run_coroutine_threadsafe(self._open_all(), self.loop).result()

    async def _open_all(self) -> list[Any]:
        from hierplan.tools.registered import describe_error

        servers = list(self._servers.values())
        opened = await asyncio.gather(*(self._open(s) for s in servers), return_exceptions=True)
        for server, got in zip(servers, opened):
            if isinstance(got, (TimeoutError, asyncio.TimeoutError)):
                raise UsageError(f"{self._where}: server {server.name!r} listed no tools within "
                                 f"{MCP_LOAD_TIMEOUT_S:g} s")
            if isinstance(got, BaseException):
                raise UsageError(f"{self._where}: server {server.name!r} could not be reached: "
                                 f"{describe_error(got)}")
        make = _session_tool_class()
        return [make.bound(self, server.name, tool) for server, tools in zip(servers, opened) for tool in tools]

    async def _open(self, server: _Server) -> list[Any]:
        """Open the server's session in a task that holds it until ``server.stop`` is set, within
        MCP_LOAD_TIMEOUT_S; the adapters' tools of that session."""
        from langchain_mcp_adapters.tools import load_mcp_tools

        if self.closed:
            raise RuntimeError(CLOSED)
        ready: asyncio.Future = self.loop.create_future()
        stop = asyncio.Event()

        async def hold() -> None:
            try:
                async with self._client.session(server.name) as session:
                    tools = await load_mcp_tools(session, server_name=server.name, handle_tool_errors=False)
                    if not ready.done():
                        ready.set_result((session, tools))
                    await stop.wait()
            except BaseException as exc:  # noqa: BLE001 - opening failed (raised by _open), or the session broke
                if not ready.done():
                    ready.set_exception(exc)
            finally:
                if server.holder is asyncio.current_task():  # it ended by itself: the next call opens a new one
                    server.session = None

        holder = self.loop.create_task(hold(), name=f"hierplan-mcp-{server.name}")
        self._holders.add(holder)
        holder.add_done_callback(self._holders.discard)
        server.holder, server.stop = holder, stop
        try:
            session, tools = await asyncio.wait_for(ready, MCP_LOAD_TIMEOUT_S)
        except BaseException:
            stop.set()
            holder.cancel()  # a server that is still starting, or hangs in its handshake: its process ends too
            await asyncio.wait([holder], timeout=MCP_CLOSE_TIMEOUT_S)
            raise
        server.session, server.tools = session, {t.name: t for t in tools}
        server.pid = _read_pid(self._pid_file(server.name))
        return tools

    # --- calling --------------------------------------------------------------------------------------------
    async def call(self, server_name: str, tool: str, arguments: dict[str, Any]) -> Any:
        """Call a server's tool on its current session (opened again if it broke); what the adapters' tool gives
        (its content and artifact). Awaited on another loop, the call is handed to this one."""
        if self.closed:
            raise RuntimeError(CLOSED)
        if asyncio.get_running_loop() is not self.loop:
            return await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(self.call(server_name, tool, arguments), self.loop))
        from langchain_core.tools import ToolException

        from hierplan.tools.registered import describe_error

        server = self._servers[server_name]
        session, bound = await self._bound(server, tool)
        if server.pid is not None and not processes.running(server.pid):
            broken = ConnectionError(f"the MCP server {server_name!r} failed (its process {server.pid} ended); the "
                                     "next call opens a new session")
            self._end(server, session, broken)
            raise broken
        task = asyncio.current_task()
        server.calls[task] = session
        try:
            return await bound.coroutine(**arguments)
        except asyncio.CancelledError:
            instead = self._dropped.pop(task, None)
            if instead is None:
                raise  # the call's time limit
            task.uncancel()
            raise instead from None
        except (ToolException, NotImplementedError, ValueError):
            raise  # the tool's own error, or content the adapters cannot convert: the session is fine
        except Exception as exc:
            if self.closed:
                raise RuntimeError(CLOSED) from exc
            broken = ConnectionError(f"the MCP server {server_name!r} failed ({describe_error(exc)}); the next "
                                     "call opens a new session")
            self._end(server, session, broken)
            raise broken from exc
        finally:
            server.calls.pop(task, None)
            self._dropped.pop(task, None)

    async def _bound(self, server: _Server, tool: str) -> tuple[Any, Any]:
        """The server's session, opened if it has none, and its tool by that name."""
        from langchain_core.tools import ToolException

        from hierplan.tools.registered import describe_error

        async with server.lock:
            if server.session is None:
                try:
                    await self._open(server)
                except Exception as exc:
                    raise ConnectionError(f"the MCP server {server.name!r} could not be started again: "
                                          f"{describe_error(exc)}") from exc
        bound = server.tools.get(tool)
        if bound is None:  # the server came back without it
            raise ToolException(f"the MCP server {server.name!r} no longer has a tool {tool!r}")
        return server.session, bound

    def _end(self, server: _Server, session: Any, error: Exception) -> None:
        """Let go of a session (unless a call opened a new one meanwhile): its holder leaves it in the
        background, which reaps a stdio server's process (close() waits for it). The calls still waiting on it
        are ended with ``error``: the session's end cancels its reader, which would never answer them."""
        if server.session is session and server.stop is not None:
            server.session = None
            server.stop.set()
        self._drop_calls(server, session, error)

    def _drop_calls(self, server: _Server, session: Any, error: Exception) -> None:
        for task, sent_on in list(server.calls.items()):
            if sent_on is session and task is not asyncio.current_task() and task not in self._dropped:
                self._dropped[task] = error
                task.cancel()

    # --- closing --------------------------------------------------------------------------------------------
    def close(self) -> None:
        """End every session (a stdio server's process with it), then the loop and its thread; once."""
        if threading.current_thread() is self._thread:  # it would wait for itself
            raise RuntimeError("McpSessions.close() called from its own event loop")
        with self._closing:
            if self.closed:
                return
            self.closed = True
        atexit.unregister(self.close)
        if not self._thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(self._end_all(), self.loop).result(MCP_CLOSE_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - a session that would not end: its server still gets the parent-death
            pass  # signal below, when the loop's thread ends
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(MCP_CLOSE_TIMEOUT_S)
        self._pid_dir.cleanup()

    async def _end_all(self) -> None:
        for server in self._servers.values():
            for session in set(server.calls.values()):
                self._drop_calls(server, session, RuntimeError(CLOSED))
            server.session = None
            if server.stop is not None:
                server.stop.set()
        # A server busy in a sync tool does not read the end of its stdin: the adapters' stdio client then
        # terminates it (about 2 s, then SIGTERM and SIGKILL); what is left after that is cancelled.
        holders = [h for h in self._holders if not h.done()]
        if holders:
            _, left = await asyncio.wait(holders, timeout=MCP_CLOSE_TIMEOUT_S / 2)
            for holder in left:
                holder.cancel()
            if left:
                await asyncio.wait(left, timeout=1)


@functools.cache
def _session_tool_class() -> type:
    """The class of an MCP tool bound to McpSessions (made on first use: langchain-core loads with the tools)."""
    from langchain_core.tools import StructuredTool
    from pydantic import PrivateAttr

    class McpSessionTool(StructuredTool):
        """An MCP server's tool whose calls run on its session's event loop (``session_loop``: call_tool hands
        them over there; awaited anywhere else, the call is handed over too)."""

        _sessions: Any = PrivateAttr(default=None)

        @property
        def session_loop(self) -> asyncio.AbstractEventLoop | None:
            """The loop its calls run on; None once the sessions are closed (a call then fails)."""
            sessions = self._sessions
            return None if sessions is None or sessions.closed else sessions.loop

        @classmethod
        def bound(cls, sessions: McpSessions, server: str, tool: Any) -> McpSessionTool:
            """The adapters' ``tool`` of ``server``, as a tool that calls it on the server's current session."""
            name = tool.name

            async def call(**arguments: Any) -> Any:
                return await sessions.call(server, name, arguments)

            made = cls(name=name, description=tool.description, args_schema=tool.args_schema,
                       coroutine=call, response_format=tool.response_format, metadata=tool.metadata,
                       handle_tool_error=False)
            made._sessions = sessions
            return made

    return McpSessionTool


def _dying_with_hierplan(connection: dict[str, Any], pid_file: Path) -> dict[str, Any]:
    """A stdio server's command, started through mcp_launch.py (the parent-death signal; its process id written to
    ``pid_file``); others as they are."""
    if connection["transport"] != "stdio":
        return connection
    launcher = str(Path(__file__).with_name("mcp_launch.py"))
    return {**connection, "command": sys.executable,
            "args": ["-I", "-S", launcher, str(os.getpid()), str(pid_file), connection["command"],
                     *connection["args"]]}


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except (OSError, ValueError):  # not a stdio server, or one started some other way
        return None
