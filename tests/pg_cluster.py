"""A throwaway PostgreSQL cluster, for the tests (tests/pg.py makes pytest fixtures of it) and for bench/
scripts (they put tests/ on sys.path): ``with running_cluster() as cluster: url = cluster.url()``. No pytest here.

The cluster lives in a temp dir, listens on 127.0.0.1 at a free port (password auth, so the URL carries a
password the tests can look for in messages) and on a Unix socket in that dir (trust, for the admin), and is
stopped and deleted at the end. initdb refuses to run as root, so as root every server command runs as the
``postgres`` user (runuser).
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

USER, PASSWORD = "hierplan", "s3cret-pw"  # the password is one the tests can search messages for
START_TIMEOUT_S = 30
MODULES = ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres")


class ClusterError(RuntimeError):
    """The cluster could not be started here."""


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


def missing() -> str | None:
    """Why no cluster can start here (a module or the server binaries are not installed), or None."""
    for module in MODULES:
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install 'hierplan[postgres]')"
    if server_bin() is None:
        return "no PostgreSQL server binaries (apt-get install postgresql, or set HIERPLAN_PG_BIN)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: cannot start PostgreSQL as another user"
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


@contextmanager
def running_cluster() -> Iterator[Cluster]:
    """A started cluster (call ``missing()`` first); ClusterError when it cannot start. Stopped and deleted after."""
    bin_dir = server_bin()
    if bin_dir is None:
        raise ClusterError(missing() or "no PostgreSQL server binaries")
    root = Path(tempfile.mkdtemp(prefix="hierplan-pg-", dir="/tmp"))  # short: the socket path has a length limit
    cluster = Cluster(bin_dir, root)
    try:
        try:
            cluster.init()
            cluster.start()
        except (subprocess.SubprocessError, RuntimeError, OSError, LookupError) as exc:
            detail = getattr(exc, "stderr", "") or exc
            raise ClusterError(f"cannot start a PostgreSQL cluster with {bin_dir}: {detail}") from exc
        yield cluster
    finally:
        if cluster.up:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
