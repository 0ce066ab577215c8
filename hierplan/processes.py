"""Whether a process of this host is there, by its id (the run store's recorded runs, the MCP sessions' servers).

``exists``: the id names a process, ours or another user's (``os.kill(pid, 0)``); ``running``: it exists and has not
exited, a zombie not yet reaped counting as exited (read from /proc where there is one).
"""

from __future__ import annotations

import os


def exists(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def running(pid: int | None) -> bool:
    if not exists(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return True  # no /proc here, or it ended meanwhile: exists' answer stands
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"  # after the command name, which may hold ")"
