"""After an evaluation with ``--mcp``: how many of its MCP servers' processes are still alive.

hierplan starts each stdio server once, for the whole evaluation (one session, ended before the count), through
mcp_launch.py, which execs the configured command: a server's command line is ``COMMAND ARGS...`` from the
configuration file (the launcher's own ends with them too). A server counts as left over when its command line
ends with a configured one and it is a descendant of this process, or it was started since this process was and
has been handed to init (its parent died). Servers of other programs, or of an evaluation running beside this
one, are not counted.

Linux only (it reads /proc); elsewhere the count is None: not checked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ORPHAN_WAIT_S = 5.0
"""How long the servers get to exit after the run before the ones still there are counted."""
POLL_S = 0.05
PROC = Path("/proc")
INIT_PID = 1


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    start: int
    """Start time in clock ticks since boot (/proc/PID/stat, field 22)."""
    argv: tuple[str, ...]


def server_commands(config: str | os.PathLike) -> list[tuple[str, ...]]:
    """The command lines of the stdio servers of an MCP configuration file (servers over HTTP start no process
    here). A bad file is a UsageError (hierplan.tools.mcp.read_config)."""
    from hierplan.tools.mcp import read_config

    return [(c["command"], *c.get("args", [])) for c in read_config(config).values() if c["transport"] == "stdio"]


def _read(pid_dir: Path) -> Process | None:
    try:
        stat = (pid_dir / "stat").read_text()
        argv = (pid_dir / "cmdline").read_bytes()
    except OSError:  # gone meanwhile, or not ours to read
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces and parentheses
    if fields[0] == "Z" or not argv:  # a zombie is dead, only not yet reaped; a kernel thread has no argv
        return None
    return Process(int(pid_dir.name), int(fields[1]), int(fields[19]),
                   tuple(a.decode(errors="replace") for a in argv.rstrip(b"\0").split(b"\0")))


def processes() -> list[Process]:
    """The live processes this user may read."""
    return [p for d in PROC.iterdir() if d.name.isdigit() and (p := _read(d)) is not None]


def _descendants(root: int, every: Sequence[Process]) -> set[int]:
    children: dict[int, list[int]] = {}
    for p in every:
        children.setdefault(p.ppid, []).append(p.pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _started(pid: int) -> int:
    p = _read(PROC / str(pid))
    return p.start if p is not None else 0


def left_over(commands: Sequence[Sequence[str]], root: int | None = None) -> list[int]:
    """The pids of the live processes running one of ``commands`` that belong to ``root`` (default: this
    process): its descendants, or ones started since it was and handed to init."""
    root = os.getpid() if root is None else root
    every = processes()
    mine, since = _descendants(root, every), _started(root)
    wanted = [tuple(c) for c in commands if c]
    return sorted(p.pid for p in every
                  if any(p.argv[-len(c):] == c for c in wanted)
                  and (p.pid in mine or (p.ppid == INIT_PID and p.start >= since)))


def orphaned_servers(config: str | os.PathLike, wait_s: float = ORPHAN_WAIT_S) -> int | None:
    """How many of the configuration's stdio servers are still running for this process ``wait_s`` seconds
    after the run (at once when none is); None where there is no /proc to look in."""
    if not PROC.is_dir():
        return None
    commands = server_commands(config)
    deadline = time.monotonic() + wait_s
    while (left := left_over(commands)) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    return len(left)
