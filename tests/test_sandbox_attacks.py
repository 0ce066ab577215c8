"""Attacks on the Python sandbox, one test per attack, for each layer combination available.

Each test states which layers promise to stop the attack (see docs/sandbox.md); where the
combination under test promises nothing, the test is skipped with that reason rather than
asserting something the level does not guarantee.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from pathlib import Path

import pytest

from hierplan.tools import SandboxLimits, run_python
from hierplan.tools.sandbox.api import LAUNCHER, plan_layers
from hierplan.tools.sandbox.probe import probe

COMBOS = {
    "full": None,
    "landlock+seccomp": ["landlock", "seccomp", "uid", "rlimits", "env"],
    "rlimits-only": ["rlimits", "env", "uid"],
}
FAST = dict(cpu_seconds=2, wall_seconds=3.0)


class Sandbox:
    def __init__(self, name: str, layers):
        self.name = name
        self.layers_arg = layers
        self.layers, self.missing = plan_layers(layers)

    def run(self, code: str, data=None, **limits):
        res = run_python(code, limits=SandboxLimits(**{**FAST, **limits}), layers=self.layers_arg, data=data)
        assert set(res.isolation) == self.layers
        return res

    def promises(self, what: str, *alternatives: str) -> None:
        """Skip unless one of the ``alternatives`` layers (which each stop this attack) is applied."""
        have = set(self.layers)
        if "landlock-scope" in alternatives and "landlock" in have and probe().landlock_abi >= 6:
            return
        if not have & set(alternatives):
            pytest.skip(f"combination {self.name} ({sorted(have)}) does not promise {what}")


def combo_unavailable(name: str) -> str | None:
    """Why this machine cannot run the combination ``name`` (None: it can). Also used by other sandbox tests."""
    p = probe()
    if name == "full" and not p.available["bwrap"]:
        return f"bwrap layer unavailable: {p.reasons['bwrap']}"
    if name == "landlock+seccomp" and not (p.available["landlock"] and p.available["seccomp"]):
        return f"landlock/seccomp unavailable: {p.reasons['landlock']}; {p.reasons['seccomp']}"
    return None


@pytest.fixture(params=list(COMBOS))
def sbx(request):
    name = request.param
    reason = combo_unavailable(name)
    if reason:
        pytest.skip(reason)
    return Sandbox(name, COMBOS[name])


def _launcher_processes() -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if LAUNCHER.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
            except OSError:
                pass
    return found


def _assert_no_survivors(timeout: float = 2.0) -> None:
    end = time.monotonic() + timeout
    while _launcher_processes() and time.monotonic() < end:
        time.sleep(0.05)
    assert _launcher_processes() == [], "a sandboxed process outlived its run"


@pytest.fixture
def host_dir():
    """A host directory with ordinary permissions (0755 / files 0644), outside any sandbox."""
    d = tempfile.mkdtemp(prefix="hierplan-victim-")
    os.chmod(d, 0o755)
    yield Path(d)
    import shutil

    shutil.rmtree(d, ignore_errors=True)


def test_read_etc_passwd(sbx):
    sbx.promises("hiding host files", "bwrap", "landlock")
    res = sbx.run("try:\n    print(open('/etc/passwd').read())\nexcept OSError as e:\n    print('blocked', type(e).__name__)")
    assert res.exit_reason == "ok"
    assert "root:" not in res.stdout and "blocked" in res.stdout


def test_read_file_in_home(sbx):
    sbx.promises("hiding the user's home", "bwrap", "landlock", "uid")
    home = Path(os.path.expanduser("~"))
    fd, name = tempfile.mkstemp(prefix=".hierplan-sandbox-test-", dir=home)
    try:
        os.write(fd, b"HOME-SECRET-7731")
        os.close(fd)
        res = sbx.run(f"try:\n    print(open({name!r}).read())\nexcept OSError as e:\n    print('blocked', e.errno)")
        assert "HOME-SECRET-7731" not in res.stdout and "blocked" in res.stdout
    finally:
        os.unlink(name)


def test_write_outside_scratch(sbx, host_dir):
    sbx.promises("confining writes to the scratch dir", "bwrap", "landlock")
    victim = host_dir / "victim.txt"
    victim.write_text("original")
    os.chmod(victim, 0o644)
    code = f"""
import os
attempts = {{}}
def attempt(name, fn):
    try:
        fn(); attempts[name] = 'done'
    except OSError as e:
        attempts[name] = type(e).__name__
attempt('direct', lambda: open({str(victim)!r}, 'w').write('pwned'))
attempt('new', lambda: open({str(host_dir / 'new.txt')!r}, 'w').write('pwned'))
attempt('tmp', lambda: open('/tmp/hierplan-sandbox-pwned', 'w').write('pwned'))
os.symlink({str(victim)!r}, 'link')
attempt('symlink', lambda: open('link', 'w').write('pwned'))
def hard():
    os.link({str(victim)!r}, 'hard')
    open('hard', 'w').write('pwned')
attempt('hardlink', hard)
print(attempts)
"""
    res = sbx.run(code)
    assert res.exit_reason == "ok", res.error
    assert victim.read_text() == "original"
    assert not (host_dir / "new.txt").exists()
    assert not Path("/tmp/hierplan-sandbox-pwned").exists()
    assert "done" not in res.stdout


def _listener(kind: int):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    if kind == socket.SOCK_STREAM:
        s.listen(5)
    s.settimeout(0.3)
    return s


def test_tcp_to_localhost(sbx):
    sbx.promises("blocking TCP", "bwrap", "seccomp", "landlock")
    srv = _listener(socket.SOCK_STREAM)
    port = srv.getsockname()[1]
    try:
        res = sbx.run(f"import socket\ntry:\n    c = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
                      f"    c.sendall(b'exfil'); print('connected')\nexcept OSError as e:\n    print('blocked', e)")
        assert "connected" not in res.stdout and "blocked" in res.stdout
        with pytest.raises(TimeoutError):
            srv.accept()
    finally:
        srv.close()


def test_udp_to_localhost(sbx):
    sbx.promises("blocking UDP", "bwrap", "seccomp")
    srv = _listener(socket.SOCK_DGRAM)
    port = srv.getsockname()[1]
    try:
        res = sbx.run(f"import socket\ntry:\n    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                      f"    c.sendto(b'exfil', ('127.0.0.1', {port})); print('sent')\nexcept OSError as e:\n    print('blocked', e)")
        assert "sent" not in res.stdout and "blocked" in res.stdout
        with pytest.raises(TimeoutError):
            srv.recvfrom(100)
    finally:
        srv.close()


def test_connect_host_unix_socket(sbx, host_dir):
    sbx.promises("blocking host unix sockets", "bwrap", "seccomp")
    path = str(host_dir / "agent.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o777)
    srv.listen(1)
    srv.settimeout(0.3)
    try:
        res = sbx.run(f"import socket\ntry:\n    c = socket.socket(socket.AF_UNIX)\n    c.connect({path!r})\n"
                      f"    c.sendall(b'x'); print('connected')\nexcept OSError as e:\n    print('blocked', e)")
        assert "connected" not in res.stdout and "blocked" in res.stdout
        with pytest.raises(TimeoutError):
            srv.accept()
    finally:
        srv.close()


def test_fork_bomb_is_bounded(sbx):
    sbx.promises("bounding processes (RLIMIT_NPROC binds only a non-root uid)", "uid")
    code = "import os\nn = 0\nwhile True:\n    try:\n        os.fork(); n += 1\n    except OSError:\n        pass\n"
    start = time.monotonic()
    res = sbx.run(code, max_processes=16, wall_seconds=1.5)
    assert res.exit_reason in ("timeout", "error", "killed")
    assert time.monotonic() - start < 10
    _assert_no_survivors()


def test_allocate_8_gb(sbx):
    res = sbx.run("import numpy as np\na = np.ones(8 * 1024**3, dtype=np.uint8)\nprint(a.sum())")
    assert res.exit_reason == "memory" and not res.ok
    assert "memory" in res.error.lower()
    res = sbx.run("b = bytearray(8 * 1024**3)")
    assert res.exit_reason == "memory"


def test_infinite_loop(sbx):
    start = time.monotonic()
    res = sbx.run("while True:\n    pass", cpu_seconds=30, wall_seconds=1.0)
    assert res.exit_reason == "timeout" and res.error == "timed out after 1 s"
    assert time.monotonic() - start < 4
    res = sbx.run("while True:\n    pass", cpu_seconds=1, wall_seconds=20)
    assert res.exit_reason == "timeout" and "CPU" in res.error
    _assert_no_survivors()


def test_huge_power(sbx):
    start = time.monotonic()
    res = sbx.run("x = 10**10**8\nprint(len(str(x)))", cpu_seconds=1, wall_seconds=3)
    assert res.exit_reason in ("timeout", "memory")
    assert time.monotonic() - start < 6


def test_kill_parent_and_test_process(sbx):
    sbx.promises("confining signals", "bwrap", "landlock-scope", "uid")
    code = f"""
import os, signal
for pid in (os.getppid(), {os.getpid()}, 1):
    try:
        os.kill(pid, signal.SIGKILL); print('killed', pid)
    except OSError as e:
        print('blocked', pid, type(e).__name__)
"""
    res = sbx.run(code)
    assert res.exit_reason == "ok", res.error
    assert f"killed {os.getpid()}" not in res.stdout
    # still here: the test process survived; and the sandbox keeps working
    assert sbx.run("print('alive')").stdout == "alive\n"


def test_setsid_daemon_does_not_survive(sbx):
    sbx.promises("reaping escaped processes", "bwrap", "seccomp", "uid")
    code = """
import os, time
if os.fork() == 0:
    try:
        os.setsid()
    except OSError:
        pass
    if os.fork() == 0:
        time.sleep(30)
    os._exit(0)
print('parent done')
"""
    res = sbx.run(code)
    assert res.exit_reason == "ok"
    _assert_no_survivors()


def test_100_mb_of_stdout(sbx):
    cap = 64 * 1024
    res = sbx.run("import sys\nchunk = 'x' * 1_000_000\nfor _ in range(100):\n    sys.stdout.write(chunk)",
                  output_bytes=cap)
    assert res.exit_reason == "output_truncated" and not res.ok
    assert len(res.stdout) <= cap
    _assert_no_survivors()


def test_parent_environ_secret(sbx, monkeypatch):
    secret = "hierplan-fake-secret-5dd0f2"
    monkeypatch.setenv("HIERPLAN_FAKE_API_KEY", secret)
    code = f"""
import os
print('env', dict(os.environ))
for pid in (os.getppid(), {os.getpid()}):
    try:
        print(open(f'/proc/{{pid}}/environ', 'rb').read())
    except OSError as e:
        print('blocked', pid, type(e).__name__)
"""
    res = sbx.run(code)
    assert res.exit_reason == "ok", res.error
    assert "HIERPLAN_FAKE_API_KEY" not in res.stdout.split("\n")[0]  # the allow-list, always
    sbx.promises("hiding other processes' /proc", "bwrap", "landlock", "uid")
    assert secret not in res.stdout


def test_io_uring_setup(sbx):
    sbx.promises("filtering syscalls", "seccomp")
    code = """
import ctypes, ctypes.util
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
r = libc.syscall(425, 8, params)
print(r, ctypes.get_errno())
"""
    res = sbx.run(code)
    assert res.exit_reason == "ok", res.error
    assert res.stdout.split() == ["-1", "1"]  # EPERM


def test_ctypes_libc_calls(sbx):
    sbx.promises("filtering syscalls made through ctypes", "seccomp")
    code = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
out = {}
out['socket_inet'] = libc.socket(2, 1, 0)
out['unshare_user'] = libc.unshare(0x10000000)
out['ptrace'] = libc.ptrace(16, 1, 0, 0)
out['setsid'] = libc.setsid()
out['kill_all'] = libc.kill(-1, 9)
print(out)
"""
    res = sbx.run(code)
    assert res.exit_reason == "ok", res.error
    values = eval(res.stdout)  # noqa: S307 - our own dict literal
    assert values == {k: -1 for k in values}, values


# --- the run's files: a file store's copies, read in place (hierplan.store.files) ------------------------------

@pytest.fixture
def stored(tmp_path):
    """A file store with the run's file and another run's file, as a run's database keeps them."""
    from hierplan.store.files import LocalFileStore

    store = LocalFileStore(str(tmp_path / "runs.sqlite.files"))
    mine = store.put_bytes(b"region,amount\nnorth,10\n")
    other = store.put_bytes(b"OTHER-RUN-SECRET-4411\n")
    return store, store.local_path(mine.sha256, "mine.csv"), store.local_path(other.sha256, "other.csv")


def test_write_change_or_replace_a_data_file(sbx, stored):
    store, mine, _ = stored
    code = """
import os
done = []
for name, fn in [("write", lambda: open("data/mine.csv", "a").write("x")),
                 ("truncate", lambda: os.truncate("data/mine.csv", 0)),
                 ("chmod", lambda: os.chmod("data/mine.csv", 0o666)),
                 ("unlink", lambda: os.unlink("data/mine.csv")),
                 ("replace", lambda: os.rename("data/mine.csv", "data/moved.csv"))]:
    try:
        fn(); done.append(name)
    except OSError:
        pass
print(done)
"""
    res = sbx.run(code, data={"mine.csv": mine})
    assert res.exit_reason == "ok", res.error
    assert res.stdout.strip() == "[]"
    with open(mine, "rb") as f:
        assert f.read() == b"region,amount\nnorth,10\n" and oct(os.stat(mine).st_mode & 0o777) == "0o444"


def test_reach_other_files_of_the_store(sbx, stored):
    store, mine, other = stored
    if probe().root:
        sbx.promises("hiding the file store's other files", "bwrap", "landlock", "uid")
    else:  # the code runs as hierplan's own user: only the filesystem layers hide the store
        sbx.promises("hiding the file store's other files", "bwrap", "landlock")
    code = f"""
import os
for name, fn in [("read", lambda: open({other!r}).read()),
                 ("list", lambda: os.listdir({store.root!r})),
                 ("through", lambda: open(os.path.join(os.path.dirname(os.path.realpath("data/mine.csv")),
                                                       {os.path.basename(other)!r})).read())]:
    try:
        print(name, fn())
    except OSError as e:
        print(name, "blocked", e.errno)
"""
    res = sbx.run(code, data={"mine.csv": mine})
    assert res.exit_reason == "ok", res.error
    assert "OTHER-RUN-SECRET" not in res.stdout and os.path.basename(other) not in res.stdout
    assert res.stdout.count("blocked") == 3, res.stdout
