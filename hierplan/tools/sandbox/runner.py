"""Process spawn, wall-clock timeout, capped concurrent output capture, process cleanup."""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

from . import reaper
from .launcher import PROGRAM_FILENAME, START
from .limits import SandboxLimits

#: Environment of the child: nothing of the agent's own environment is passed on.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}
ERROR_TAIL_LINES = 4  # an error's last lines: the frame it failed in and the exception
ERROR_CHARS = 1500
DRAIN_S = 0.5  # after the main process ends, how long to wait for stragglers to close the pipes
_MEMORY_LINE = re.compile(r"^[\w.]*MemoryError\b")


def child_env(scratch: str) -> dict[str, str]:
    # matplotlib writes its font cache under MPLCONFIGDIR: somewhere writable that dies with the run
    return {**BASE_ENV, "HOME": scratch, "TMPDIR": scratch, "MPLCONFIGDIR": os.path.join(scratch, ".matplotlib")}


@dataclass
class Raw:
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool
    killed_by_us: bool
    duration_s: float


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def sweep_uid(uid: int) -> None:
    """Kill every process left under the per-run ``uid`` (escaped its group, e.g. via setsid).

    ``kill -9 -1`` run *as that uid* reaches all of them atomically, even ones forking."""
    kill = shutil.which("kill")
    for _ in range(5):
        if not reaper.uid_pids(uid):
            return
        if kill:
            subprocess.run([kill, "-9", "-1"], user=uid, group=uid, extra_groups=[], env={},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        else:  # pragma: no cover
            for pid in reaper.uid_pids(uid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.02)


def _spawn(argv: list[str], env: dict[str, str], cwd: str, uid: int | None) -> subprocess.Popen:
    """Start the launcher and let its code run only once the run is registered with the reaper.

    The read end of a pipe is appended to ``argv`` (the launcher's START_FD); one byte on it
    starts the code, EOF (hierplan died first) aborts it."""
    r, w = os.pipe()
    try:
        try:
            proc = subprocess.Popen([*argv, str(r)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env, cwd=cwd, close_fds=True, pass_fds=(r,),
                                    start_new_session=True)
        finally:
            os.close(r)
        try:
            reaper.register(proc.pid, uid)
        except BaseException:
            _killpg(proc.pid)
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
            raise
        os.write(w, START)
    finally:
        os.close(w)
    return proc


def execute(argv: list[str], *, env: dict[str, str], cwd: str, limits: SandboxLimits,
            uid: int | None = None, sweep: bool = False) -> Raw:
    """Run ``argv`` in a new session; read stdout/stderr together until EOF, the cap or the timeout.

    Until the group is killed (and, with ``sweep``, every process of ``uid``), the reaper holds it:
    if hierplan dies meanwhile, the reaper kills them."""
    start = time.monotonic()
    proc = _spawn(argv, env, cwd, uid)
    pgid = proc.pid
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    cap = limits.output_bytes
    timed_out = truncated = killed = False
    deadline = start + limits.wall_seconds
    drain_until: float | None = None
    sel = selectors.DefaultSelector()
    for f in (proc.stdout, proc.stderr):
        os.set_blocking(f.fileno(), False)
        sel.register(f.fileno(), selectors.EVENT_READ)
    try:
        while sel.get_map():
            reaper.ensure_running()  # a waitpid(WNOHANG): replaced within one poll if something killed it
            now = time.monotonic()
            if drain_until is None and proc.poll() is not None:
                _killpg(pgid)  # orphans left in the group
                drain_until = now + DRAIN_S
            limit_at = drain_until if drain_until is not None else deadline
            if now >= limit_at:
                if drain_until is None:
                    timed_out = killed = True
                    _killpg(pgid)
                    proc.wait()
                    drain_until = time.monotonic() + DRAIN_S
                    continue
                break  # something escaped and holds the pipe: stop reading
            for key, _ in sel.select(timeout=min(limit_at - now, 0.05)):
                fd = key.fd
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
                    continue
                buf = bufs[fd]
                room = cap - len(buf)
                if len(data) > room:
                    buf += data[:max(room, 0)]
                    if not truncated:
                        truncated = killed = True
                        _killpg(pgid)
                else:
                    buf += data
        rc = proc.wait()
    finally:
        sel.close()
        _killpg(pgid)
        for f in (proc.stdout, proc.stderr):
            f.close()
        if proc.returncode is None:
            proc.kill()
            proc.wait()
        if sweep and uid is not None:
            sweep_uid(uid)
        reaper.unregister(pgid, uid)
    return Raw(rc, bytes(bufs[out_fd]), bytes(bufs[err_fd]), timed_out, truncated, killed,
               time.monotonic() - start)


def _tail(text: str, lines: int = ERROR_TAIL_LINES, chars: int = ERROR_CHARS) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return "\n".join(kept)[-chars:]


_FRAME_RE = re.compile(r'^\s*File "(.*)", line \d+')
_MARKS = set("^~ ")


def error_report(stderr: str) -> str:
    """A failed program's error: its last lines, led by the program's own line it failed at where the failure came
    from inside a library (a pandas traceback's last lines are pandas' frames only, and whoever repairs the program
    needs to know which of its lines to change; Python's ^~~ markers are left out there)."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip() and not set(ln.strip()) <= _MARKS]
    own = [i for i, ln in enumerate(lines) if (m := _FRAME_RE.match(ln)) and m.group(1) == PROGRAM_FILENAME]
    if not own or own[-1] >= len(lines) - ERROR_TAIL_LINES:
        return _tail(stderr)
    at = own[-1]
    frame = lines[at:at + 2] if at + 1 < len(lines) and not _FRAME_RE.match(lines[at + 1]) else lines[at:at + 1]
    return ("\n".join(frame + ["  ..."] + lines[-ERROR_TAIL_LINES:]))[-ERROR_CHARS:]


def classify(raw: Raw, limits: SandboxLimits, *, signal_from_exit: bool) -> tuple[str, str | None, int]:
    """(exit_reason, error, returncode). Signals are reported as negative return codes; under
    bwrap the child's "killed by N" arrives as exit status 128+N (``signal_from_exit``)."""
    rc = raw.returncode
    if signal_from_exit and 128 < rc <= 128 + 64:
        rc = -(rc - 128)
    stderr = raw.stderr.decode("utf-8", errors="replace")
    if raw.timed_out:
        return "timeout", f"timed out after {limits.wall_seconds:g} s", rc
    if raw.truncated:
        return "output_truncated", f"output exceeded {limits.output_bytes} bytes; the run was stopped", rc
    if rc == 0:
        return "ok", None, rc
    last = _tail(stderr, 1)
    if _MEMORY_LINE.match(last):
        return "memory", f"out of memory (limit {limits.memory_bytes} bytes): {_tail(stderr, 2)}", rc
    if rc == -signal.SIGXCPU or (rc == -signal.SIGKILL and "MemoryError" not in stderr and raw.duration_s >= limits.cpu_seconds):
        return "timeout", f"CPU time limit of {limits.cpu_seconds} s exceeded", rc
    if rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        if rc in (-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGABRT) and "MemoryError" in stderr:
            return "memory", f"out of memory (limit {limits.memory_bytes} bytes)", rc
        return "killed", f"killed by {name}", rc
    return "error", error_report(stderr) or f"exited with status {rc}", rc
