"""A small process that outlives hierplan and kills what its sandboxed runs left when hierplan dies.

Why a separate process: the parent-death signal the launcher sets (``PR_SET_PDEATHSIG``) reaches
only the launcher itself; what the user's code forks is reparented to init when hierplan is
killed with SIGKILL and nothing in the dead process can run any more. Options considered:

* ``PR_SET_CHILD_SUBREAPER`` in the launcher: orphans then reparent to the launcher, but the
  launcher is the process the parent-death signal kills, so they move on to init anyway;
  making the launcher a supervisor that forks the code would let that code (same uid,
  same Landlock domain) kill its supervisor first.
* bubblewrap's pid namespace: ends everything with its init, but bwrap is not always there.
* this reaper: one per hierplan process (started on the first ``run_python``, a few ms once),
  in its own session, holding the read end of a pipe whose only write end is in hierplan (close
  on exec, closed in forked children). Each run registers its process group and its per-run uid
  (one pipe write). EOF means hierplan is gone, whatever killed it: the reaper kills every
  registered group and, where a throw-away uid is used, every process of that uid (``kill(-1)``
  run as that uid, which the kernel applies atomically even to a fork bomb), removes the runs'
  temporary directories (which the dead process's ``finally`` never reached), then exits. The
  sandboxed code cannot stop it: it runs under another uid (root hierplan), outside the code's
  Landlock signal scope (ABI >= 6), or outside its pid namespace (bwrap). Only the unprivileged,
  no-bwrap, Landlock < 6 case lets the code signal it (docs/sandbox.md, known limits).

Standard library only: this file also runs as ``python -I -S reaper.py FD``.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time

#: How long the reaper keeps killing (a group mid-fork, a uid still listed) before it gives up.
KILL_FOR_S = 2.0
_POLL_S = 0.02


# ---------------------------------------------------------------------------------------------------------
# hierplan's side


class _Client:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc = None
        self.wfd: int | None = None
        self.live: dict[bytes, int] = {}  # _group_entry or _dir_entry: count; replayed to a new reaper

    def _start(self) -> None:
        import subprocess

        r, w = os.pipe()  # both close-on-exec: only the reaper (pass_fds) gets r
        try:
            self.proc = subprocess.Popen(
                [os.path.realpath(sys.executable), "-I", "-S", os.path.abspath(__file__), str(r)],
                pass_fds=(r,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={}, cwd="/", close_fds=True, start_new_session=True)
        except BaseException:
            os.close(w)
            raise
        finally:
            os.close(r)
        self.wfd = w
        for entry, n in self.live.items():
            os.write(w, b"+ %s\n" % entry * n)

    def _alive(self) -> bool:
        return self.wfd is not None and self.proc.poll() is None

    def update(self, entry: bytes, delta: int) -> None:
        line = b"%s %s\n" % (b"+" if delta > 0 else b"-", entry)
        with self.lock:
            count = self.live.get(entry, 0) + delta
            if count > 0:
                self.live[entry] = count
            else:
                self.live.pop(entry, None)
            if delta < 0 and not self._alive():
                self._close()
                return  # nothing to tell a reaper that is gone; no need to start one for this
            for attempt in (0, 1):
                if not self._alive():
                    self._close()
                    self._start()  # replays self.live, which already holds this change
                    return
                try:
                    os.write(self.wfd, line)  # < PIPE_BUF: atomic
                    return
                except BrokenPipeError:
                    if attempt:
                        raise
                    self._close()

    def ensure(self) -> None:
        with self.lock:
            if self.live and not self._alive():
                self._close()
                self._start()

    def _close(self) -> None:
        if self.wfd is not None:
            try:
                os.close(self.wfd)
            except OSError:
                pass
        self.wfd = None

    def after_fork_in_child(self) -> None:
        # A forked copy of hierplan must not keep the reaper's pipe open (its EOF would wait for
        # the copy) nor share its registrations; it starts its own reaper if it runs code.
        self.lock = threading.Lock()
        self._close()
        self.proc = None
        self.live = {}


_client = _Client()
os.register_at_fork(after_in_child=_client.after_fork_in_child)


#: The longest entry a registration may write: a line up to PIPE_BUF bytes reaches the reaper whole.
MAX_ENTRY_BYTES = 4000
_DIR = b"dir "


def _group_entry(pgid: int, uid: int | None) -> bytes:
    return b"%d %d" % (pgid, -1 if uid is None else uid)


def register(pgid: int, uid: int | None) -> None:
    """From now until :func:`unregister`, the group ``pgid`` (and ``uid``'s processes) die with hierplan."""
    _client.update(_group_entry(pgid, uid), +1)


def unregister(pgid: int, uid: int | None) -> None:
    try:
        _client.update(_group_entry(pgid, uid), -1)
    except OSError:
        pass  # the reaper is gone and this run is over: nothing left for it to kill


def _dir_entry(path: str) -> bytes | None:
    entry = _DIR + os.fsencode(os.path.abspath(path))
    return entry if b"\n" not in entry and len(entry) <= MAX_ENTRY_BYTES else None


def own_dir(path: str) -> None:
    """From now until :func:`release_dir`, ``path`` is removed if hierplan dies (after the kills).
    A path the line protocol cannot carry (a newline, over MAX_ENTRY_BYTES) is left to the caller alone."""
    entry = _dir_entry(path)
    if entry is not None:
        _client.update(entry, +1)


def release_dir(path: str) -> None:
    entry = _dir_entry(path)
    if entry is not None:
        try:
            _client.update(entry, -1)
        except OSError:
            pass  # the reaper is gone: the caller removes the directory itself


def ensure_running() -> None:
    """Restart a reaper that died (killed by someone) while runs are registered; cheap when it lives."""
    _client.ensure()


def reaper_pid() -> int | None:
    """The running reaper's pid (tests)."""
    proc = _client.proc
    return proc.pid if proc is not None and proc.poll() is None else None


# ---------------------------------------------------------------------------------------------------------
# The reaper process


def _state_and_pgid(pid: str) -> tuple[str, int]:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return fields[0], int(fields[2])


def _live(pid: str) -> bool:
    """Not gone and not a zombie (a killed orphan awaiting init's wait counts as dead)."""
    try:
        return _state_and_pgid(pid)[0] not in "ZX"
    except (OSError, IndexError, ValueError):
        return False


def uid_pids(uid: int) -> list[int]:
    """Live processes of ``uid``."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and _live(name):
                    out.append(int(name))
            except OSError:
                pass
    return out


def group_pids(pgid: int) -> list[int]:
    """Live members of process group ``pgid``."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                state, group = _state_and_pgid(name)
            except (OSError, IndexError, ValueError):
                continue
            if group == pgid and state not in "ZX":
                out.append(int(name))
    return out


def _kill_uid(uid: int) -> None:
    """``kill(-1, SIGKILL)`` as ``uid``: every process of that uid, atomically (needs root)."""
    try:
        pid = os.fork()  # the reaper is single-threaded: a plain fork is safe here
    except OSError:
        for pid in uid_pids(uid):  # one by one: may miss a process forked meanwhile; the caller loops
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def kill_all(groups: set[int], uids: set[int]) -> None:
    deadline = time.monotonic() + KILL_FOR_S
    while (groups or uids) and time.monotonic() < deadline:
        for pgid in list(groups):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):  # gone, or no longer ours
                groups.discard(pgid)
                continue
            if not group_pids(pgid):
                groups.discard(pgid)
        for uid in list(uids):
            if not uid_pids(uid):
                uids.discard(uid)
            elif os.geteuid() == 0:
                _kill_uid(uid)
            else:  # pragma: no cover - a throw-away uid is only used by a root hierplan
                uids.discard(uid)
        if groups or uids:
            time.sleep(_POLL_S)


def main(fd: int) -> None:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)  # only the pipe's EOF ends the reaper
    live: dict[bytes, int] = {}
    buf = b""
    while True:
        data = os.read(fd, 4096)
        if not data:
            break
        buf += data
        *lines, buf = buf.split(b"\n")
        for line in lines:
            op, entry = line[:1], line[2:]
            live[entry] = live.get(entry, 0) + (1 if op == b"+" else -1)
            if live[entry] <= 0:
                del live[entry]
    # hierplan is gone (or exited): kill whatever its runs left, then remove their directories.
    dirs = [os.fsdecode(entry[len(_DIR):]) for entry in live if entry.startswith(_DIR)]
    groups = [tuple(map(int, entry.split())) for entry in live if not entry.startswith(_DIR)]
    kill_all({g for g, _ in groups}, {u for _, u in groups if u >= 0})
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)  # does not follow symlinks the code may have left


if __name__ == "__main__":
    main(int(sys.argv[1]))
