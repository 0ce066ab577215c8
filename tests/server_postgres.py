"""A throwaway PostgreSQL cluster for the server tests and bench: Debian's server binaries, a temp data
directory, a Unix socket in a temp folder, no TCP. initdb refuses to run as root, so as root the cluster runs
as the `postgres` user (runuser); otherwise as the current user."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

START_TIMEOUT_S = 30


def server_bin() -> Path | None:
    """The newest installed PostgreSQL server binaries, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def missing() -> str | None:
    """Why no cluster can start here, or None."""
    if server_bin() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser (initdb refuses root)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'hierplan[server]')"
    return None


def _as_owner(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Yield a connection URL (user postgres, database postgres) of a fresh cluster; stop and delete it after."""
    bin_dir = server_bin()
    root = Path(tempfile.mkdtemp(prefix="hierplan-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
    try:
        subprocess.run(_as_owner([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                                  "--no-sync", "-E", "UTF8"]), check=True, capture_output=True, timeout=120)
        options = f"-k {sock} -c listen_addresses='' -c fsync=off -c max_connections=200"
        subprocess.run(_as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w",
                                  "-t", str(START_TIMEOUT_S), "-l", str(root / "log"), "start"]),
                       check=True, capture_output=True, timeout=START_TIMEOUT_S + 10)
        yield f"postgresql://postgres@/postgres?host={sock}"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                           capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
