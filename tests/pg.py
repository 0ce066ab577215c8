"""A throwaway PostgreSQL cluster for tests: fixtures ``pg_cluster`` (one per session) and ``pg_url`` (a fresh
database per test). Import both into a test module: ``from pg import pg_cluster, pg_url  # noqa: F401``.

The cluster lives in a temp dir, listens on 127.0.0.1 at a free port (password auth, so the URL carries a
password the tests can look for in messages) and on a Unix socket in that dir (trust, for the admin), and is
stopped at the end. initdb refuses to run as root, so as root every server command runs as the ``postgres``
user (runuser). Without server binaries the tests call needs.unavailable (a skip, or a failure under CI).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from needs import unavailable

USER, PASSWORD = "hierplan", "s3cret-pw"  # the password is one the tests can search messages for
START_TIMEOUT_S = 30


def server_bin() -> Path | None:
    """The directory with initdb and pg_ctl: $HIERPLAN_PG_BIN, Debian's newest /usr/lib/postgresql/N/bin, or PATH."""
    candidates = [os.environ.get("HIERPLAN_PG_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                         if Path(p).parent.name.isdigit() else 0, reverse=True)
    found = shutil.which("initdb")
    candidates.append(str(Path(found).parent) if found else "")
    for folder in filter(None, candidates):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, bin_dir: Path, root: Path):
        self.bin, self.root, self.data = bin_dir, root, root / "data"
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0  # initdb and postgres refuse root
        self.up = False

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / argv[0]), *argv[1:]]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=START_TIMEOUT_S, check=check)

    def init(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_postgres:
            shutil.chown(self.root, "postgres")
            shutil.chown(pwfile, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", USER, f"--pwfile={pwfile}", "--auth-local=trust",
                  "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
        pwfile.unlink()

    def start(self) -> None:
        # fsync off: a throwaway cluster; a clean stop (pg_ctl -m fast) still writes everything out
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
                   "-c full_page_writes=off -c max_connections=200")
        proc = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-o", options,
                         "start", check=False)
        if proc.returncode != 0:
            log = (self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {proc.stderr.strip()} {log}")
        self.up = True

    def stop(self) -> None:
        """A fast shutdown: sessions are ended at once, as in a restart or failover."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop", check=False)
        self.up = False

    def url(self, dbname: str = "postgres", password: str = PASSWORD, host: str = "127.0.0.1") -> str:
        return f"postgresql://{USER}:{password}@{host}:{self.port}/{dbname}"

    def create_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name


@pytest.fixture(scope="session")
def pg_cluster():
    import importlib.util

    for module in ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres"):
        if importlib.util.find_spec(module) is None:
            unavailable(f"{module} is not installed (pip install 'hierplan[postgres]')")
    bin_dir = server_bin()
    if bin_dir is None:
        unavailable("no PostgreSQL server binaries (apt-get install postgresql, or set HIERPLAN_PG_BIN)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        unavailable("running as root without runuser: cannot start PostgreSQL as another user")
    root = Path(tempfile.mkdtemp(prefix="hierplan-pg-", dir="/tmp"))  # short: the socket path has a length limit
    cluster = Cluster(bin_dir, root)
    try:
        cluster.init()
        cluster.start()
    except (subprocess.SubprocessError, RuntimeError, OSError, LookupError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        detail = getattr(exc, "stderr", "") or exc
        unavailable(f"cannot start a PostgreSQL cluster with {bin_dir}: {detail}")
    yield cluster
    cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster) -> str:
    """A URL (with the password) to a new, empty database on the session's cluster."""
    url = pg_cluster.url(pg_cluster.create_database())
    yield url
    store = sys.modules.get("hierplan.store.postgres")
    if store is not None:  # this process's pools for it (hierplan closes them at exit otherwise)
        store.close_pools(url)
