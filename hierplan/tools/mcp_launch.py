"""Start an MCP server over stdio so that it dies with hierplan: ``python -I -S mcp_launch.py PARENT_PID PID_FILE
COMMAND ARGS...`` sets the parent-death signal (SIGKILL), writes its process id (the server's, after the exec) to
PID_FILE, and then becomes COMMAND (exec). The id lets hierplan see a server that died between two calls (its
pipe's end of file can come after the next request is sent, which then waits for an answer that never comes).

Why: a stdio server exits when hierplan closes its stdin, but one busy in a tool call when hierplan is killed
with SIGKILL reads that end of file only when the call is over (a sync FastMCP tool blocks its event loop), and
lingers until then. The signal is sent when the thread that started the server ends: hierplan starts every one
from the event loop thread of its MCP sessions (hierplan.tools.mcp_sessions.McpSessions), which ends after it closed them
(or with hierplan).
Linux only; elsewhere the server is started as it is. Standard library only: runs with ``-I -S``.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    parent, pid_file, command = int(argv[0]), argv[1], argv[2:]
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # hierplan died before the signal was set: nobody will read this server
            sys.exit(1)
    with open(pid_file + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(pid_file + ".tmp", pid_file)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
