"""Sandboxed code dies with its run: a hierplan-like parent killed by SIGKILL leaves no process behind,
and no run directory.

The parent is a real separate process that calls ``run_python`` from a worker thread (as the graph
does), with a temporary directory of its own (TMPDIR); the test kills it with SIGKILL while the code spins,
forks, or fork-bombs, then looks for any survivor by name, process group and per-run uid, and for the run's
staging and scratch directories. Every layer combination of the attack tests runs, plus one without the uid
layer; those this machine lacks skip with their reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from hierplan.tools.sandbox import launcher, reaper
from hierplan.tools.sandbox.api import LAUNCHER, SCRATCH_PREFIX, STAGING_PREFIX, plan_layers
from hierplan.tools.sandbox.pyenv import python_layout
from test_sandbox_attacks import COMBOS, combo_unavailable

ROOT = str(Path(__file__).resolve().parent.parent)
LIFETIME_COMBOS = {**COMBOS, "no-uid": ["rlimits", "env"]}
GONE_WITHIN_S = 2.0
#: The parent: prints the reaper's pid after a warm-up run, then runs CODE in a worker thread.
PARENT = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from hierplan.tools import SandboxLimits, run_python
from hierplan.tools.sandbox import reaper
import os, time
layers, code, limits = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
assert run_python("pass", layers=layers).ok
copy = None
if sys.argv[4:] == ["fork"]:  # a forked copy of this process that outlives it
    copy = os.fork()
    if copy == 0:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 1)
        os.dup2(null, 2)
        time.sleep(60)
        os._exit(0)
print(json.dumps({"reaper": reaper.reaper_pid(), "copy": copy}), flush=True)
with ThreadPoolExecutor(1) as pool:
    res = pool.submit(run_python, code, layers=layers, limits=SandboxLimits(**limits)).result()
print(json.dumps(res.model_dump()), flush=True)
"""


def _named(token: str) -> str:
    return f"import ctypes\nctypes.CDLL(None).prctl(15, b{token!r}, 0, 0, 0)\n"  # PR_SET_NAME, inherited by forks


SPIN = "while True:\n    pass\n"
FORKS = """import os, time
for _ in range(4):
    if os.fork() == 0:
        if os.fork() == 0:
            while True:
                time.sleep(1)  # no CPU used: only a kill ends it
        while True:
            pass
while True:
    pass
"""
BOMB = """import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""


def _proc(pid: int) -> dict | None:
    """Name, state, process group and uid of a live process (None: gone or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return {"pid": pid, "comm": comm, "pgid": int(fields[2]), "uid": uid}


def _all() -> list[dict]:
    return [p for p in (_proc(int(n)) for n in os.listdir("/proc") if n.isdigit()) if p]


def _survivors(token: str, pgids: set[int], uids: set[int]) -> list[dict]:
    return [p for p in _all() if p["comm"] == token or p["pgid"] in pgids or p["uid"] in uids]


RUN_DIR_PREFIXES = (STAGING_PREFIX, SCRATCH_PREFIX)


def _run_dirs(tmpdir: str | None) -> list[str]:
    """The run directories (staging, scratch) in the parent's TMPDIR."""
    return [n for n in os.listdir(tmpdir) if n.startswith(RUN_DIR_PREFIXES)] if tmpdir else []


def _start_parent(layers, code: str, limits: dict, *extra: str, tmpdir: str | None = None
                  ) -> tuple[subprocess.Popen, dict]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    if tmpdir:
        env["TMPDIR"] = tmpdir
    proc = subprocess.Popen([sys.executable, "-c", PARENT, json.dumps(layers), code, json.dumps(limits), *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        raise AssertionError(f"the parent failed (exit {proc.wait(timeout=30)})")
    return proc, json.loads(line)


def _wait_for_code(token: str, proc: subprocess.Popen, count: int) -> list[dict]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [p for p in _all() if p["comm"] == token]
        if len(found) >= count:
            return found
        if proc.poll() is not None:
            raise AssertionError(f"the parent ended first: {proc.communicate()}")
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"the sandboxed code never reached {count} processes")


def _kill_parent_and_check(combo: str, body: str, *, processes: int, settle_s: float = 0.0,
                           fork_copy: bool = False, kill_reaper: bool = False, **limits) -> None:
    reason = combo_unavailable(combo) if combo in COMBOS else None
    if reason:
        pytest.skip(reason)
    layers = LIFETIME_COMBOS[combo]
    token = "hp" + uuid.uuid4().hex[:12]
    limits = {"cpu_seconds": 60, "wall_seconds": 120, **limits}
    with tempfile.TemporaryDirectory() as tmpdir:
        os.chmod(tmpdir, 0o755)  # the per-run uid reaches its scratch directory through it
        proc, started = _start_parent(layers, _named(token) + body, limits, *(["fork"] if fork_copy else []),
                                      tmpdir=tmpdir)
        try:
            _check_kill(proc, started["reaper"], combo, token, processes, settle_s, kill_reaper, tmpdir)
        finally:
            if started["copy"]:
                os.kill(started["copy"], signal.SIGKILL)


def _reapers_of(parent: int) -> list[int]:
    found = []
    for p in _all():
        try:
            cmdline = Path(f"/proc/{p['pid']}/cmdline").read_bytes()
            ppid = int(Path(f"/proc/{p['pid']}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and reaper.__file__.encode() in cmdline:
            found.append(p["pid"])
    return found


def _check_kill(proc: subprocess.Popen, reaper_pid: int, combo: str, token: str, processes: int,
                settle_s: float, kill_reaper: bool = False, tmpdir: str | None = None) -> None:
    layers = LIFETIME_COMBOS[combo]
    try:
        found = _wait_for_code(token, proc, processes)
        assert not tmpdir or _run_dirs(tmpdir), "the run's staging directory was meant to exist while it ran"
        if settle_s:
            time.sleep(settle_s)
            found += [p for p in _all() if p["comm"] == token]
        if kill_reaper:
            os.kill(reaper_pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while not (set(_reapers_of(proc.pid)) - {reaper_pid}) and time.monotonic() < deadline:
                time.sleep(0.02)
            replaced = set(_reapers_of(proc.pid)) - {reaper_pid}
            assert replaced, "the killed reaper was not replaced while the run went on"
            reaper_pid = replaced.pop()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    pgids = {p["pgid"] for p in found}
    uids = {p["uid"] for p in found} - {os.geteuid()}
    if "uid" in plan_layers(layers)[0] and os.geteuid() == 0:
        assert uids, "the code was meant to run under a throw-away uid"
    deadline = time.monotonic() + GONE_WITHIN_S
    while _survivors(token, pgids, uids) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = _survivors(token, pgids, uids)
    assert not left, f"the sandboxed code outlived the killed parent ({combo}): {left[:5]}"
    while _proc(reaper_pid) and time.monotonic() < deadline + 1:
        time.sleep(0.02)
    assert _proc(reaper_pid) is None, "the reaper did not exit after cleaning up"
    assert _run_dirs(tmpdir) == [], f"the killed run's directories were left behind ({combo})"


@pytest.mark.parametrize("combo", list(LIFETIME_COMBOS))
def test_sigkill_during_a_busy_loop_leaves_nothing(combo):
    _kill_parent_and_check(combo, SPIN, processes=1)


@pytest.mark.parametrize("combo", list(LIFETIME_COMBOS))
def test_sigkill_while_forked_children_run_leaves_nothing(combo):
    """The children and grandchildren are no longer the parent-death signal's business: the reaper's."""
    _kill_parent_and_check(combo, FORKS, processes=9, max_processes=4096)  # RLIMIT_NPROC may count a user's others


def test_a_forked_copy_of_the_parent_does_not_keep_the_reaper_waiting():
    """The reaper's pipe is closed in forked copies: the parent's death alone is what counts."""
    _kill_parent_and_check("no-uid", FORKS, processes=9, max_processes=4096, fork_copy=True)


def test_a_killed_reaper_is_replaced_while_the_run_goes_on():
    """Whoever kills the reaper (the code itself, where it runs under hierplan's own uid) gains nothing:
    the next poll of the run starts a new one that knows the run."""
    _kill_parent_and_check("no-uid", FORKS, processes=9, max_processes=4096, kill_reaper=True)


@pytest.mark.parametrize("combo", list(LIFETIME_COMBOS))
def test_sigkill_during_a_fork_bomb_leaves_nothing(combo):
    layers = LIFETIME_COMBOS[combo]
    if "uid" not in plan_layers(layers)[0]:
        pytest.skip(f"combination {combo} does not bound processes (RLIMIT_NPROC binds only a non-root uid)")
    # How far it grows depends on what else the uid runs (a non-root user's other processes count): kill it mid-bomb.
    _kill_parent_and_check(combo, BOMB, processes=1, settle_s=0.5, max_processes=16)


def test_a_normal_exit_ends_the_reaper_too():
    proc, started = _start_parent(["rlimits", "env"], "print(1)", {})
    reaper_pid = started["reaper"]
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert json.loads(out.splitlines()[-1])["stdout"] == "1\n"
    deadline = time.monotonic() + GONE_WITHIN_S
    while _proc(reaper_pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _proc(reaper_pid) is None


# The races the launcher closes, driven directly: the code must not start when the parent is already gone.

def _launch(tmp_path, parent_pid: int | None, start: bytes | None) -> tuple[subprocess.CompletedProcess, Path]:
    import marshal

    marker = tmp_path / "ran"
    (tmp_path / "code.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    cfg = {"code": str(tmp_path / "code.py"), "lib_dir": os.path.dirname(LAUNCHER), "scratch": str(tmp_path),
           "sys_path": [], "rlimits": {}, "parent_pid": parent_pid}
    (tmp_path / "config.bin").write_bytes(marshal.dumps(cfg))
    r, w = os.pipe()
    if start:
        os.write(w, start)
    os.close(w)
    try:
        cp = subprocess.run([python_layout().executable, "-I", "-S", LAUNCHER, str(tmp_path / "config.bin"), str(r)],
                            pass_fds=(r,), capture_output=True, text=True, timeout=60)
    finally:
        os.close(r)
    return cp, marker


def test_the_code_starts_only_with_the_start_byte(tmp_path):
    cp, marker = _launch(tmp_path, os.getpid(), launcher.START)
    assert cp.returncode == 0 and marker.exists(), cp.stderr
    marker.unlink()
    cp, marker = _launch(tmp_path, os.getpid(), None)  # EOF: the parent died before registering the run
    assert cp.returncode == launcher.SETUP_FAILED and launcher.MARKER in cp.stderr
    assert not marker.exists()


def test_the_code_does_not_start_when_the_parent_is_already_gone(tmp_path):
    cp, marker = _launch(tmp_path, 1, launcher.START)  # "our parent was pid 1": as after reparenting
    assert cp.returncode == launcher.SETUP_FAILED and not marker.exists()


def test_the_reaper_kills_registered_groups_when_its_pipe_closes():
    """The reaper alone, without the sandbox: EOF on its pipe kills the registered group, even its forks."""
    victim = subprocess.Popen([sys.executable, "-c", "import os, time\nos.fork()\ntime.sleep(60)"],
                              start_new_session=True)
    r, w = os.pipe()
    dog = subprocess.Popen([sys.executable, "-I", "-S", reaper.__file__, str(r)], pass_fds=(r,))
    os.close(r)
    os.write(w, b"+ %d -1\n" % victim.pid)
    deadline = time.monotonic() + 10
    while len([p for p in _all() if p["pgid"] == victim.pid]) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len([p for p in _all() if p["pgid"] == victim.pid]) == 2
    os.close(w)
    assert dog.wait(timeout=10) == 0
    assert victim.wait(timeout=5) == -signal.SIGKILL
    deadline = time.monotonic() + GONE_WITHIN_S
    while [p for p in _all() if p["pgid"] == victim.pid] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [p for p in _all() if p["pgid"] == victim.pid] == []


def test_the_reaper_removes_registered_directories_when_its_pipe_closes(tmp_path):
    """A directory registered and not released is removed, a released one is left, a symlink inside is not
    followed."""
    kept, left, outside = tmp_path / "kept", tmp_path / "hierplan-sbx-x", tmp_path / "outside"
    for d in (kept, left, outside):
        d.mkdir()
    (left / "code.py").write_text("pass")
    (left / "link").symlink_to(outside, target_is_directory=True)
    (outside / "precious").write_text("x")
    r, w = os.pipe()
    dog = subprocess.Popen([sys.executable, "-I", "-S", reaper.__file__, str(r)], pass_fds=(r,))
    os.close(r)
    os.write(w, b"+ dir %s\n+ dir %s\n- dir %s\n" % (bytes(left), bytes(kept), bytes(kept)))
    os.close(w)
    assert dog.wait(timeout=10) == 0
    assert not left.exists() and kept.is_dir() and (outside / "precious").read_text() == "x"
