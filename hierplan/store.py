"""The run database: LangGraph's SQLite checkpointer plus a small table of runs, in one file."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from hierplan.errors import DatabaseError, RunNotFoundError, UsageError

MEMORY = ":memory:"
BUSY_TIMEOUT_MS = 30_000
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
STATUSES = ("running", "waiting", "interrupted", "failed", "done")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hierplan_runs (
    id TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL,
    started REAL NOT NULL, updated REAL NOT NULL, pid INTEGER, host TEXT,
    options TEXT NOT NULL DEFAULT '{}', error TEXT
)"""


@contextmanager
def database_errors(path: str, writing: bool = False) -> Iterator[None]:
    """Turn SQLite's errors (locked, corrupt, not a database, disk full) into one clear DatabaseError."""
    try:
        yield
    except sqlite3.IntegrityError:
        raise  # a constraint, not a broken file: e.g. RunStore.create() makes a taken run id a usage error
    except sqlite3.DatabaseError as exc:
        if writing:  # another --db would not help: the run being written lives in this one
            raise DatabaseError(f"cannot write to database {path}: {exc}") from exc
        raise DatabaseError(f"cannot use database {path}: {exc} (pass another file with --db)") from exc


def connect(path: str) -> sqlite3.Connection:
    """Open (creating if needed) the database, with clear errors for a locked, unreadable or corrupt file."""
    if path != MEMORY:
        parent = Path(path).expanduser().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseError(f"cannot create the folder for database {path}: {exc.strerror}") from exc
    with database_errors(path):
        # check_same_thread=False: the checkpointer serialises access with its own lock.
        conn = sqlite3.connect(os.path.expanduser(path), check_same_thread=False,
                               timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if path != MEMORY:
            conn.execute("PRAGMA journal_mode=WAL")  # readers never block the writer of a live run
            # In WAL mode NORMAL survives a killed process (the OS has every commit); only a power cut can
            # lose the last commits. Saves an fsync per checkpoint.
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
        conn.commit()
    return conn


def read_checkpoint(saver, run_id: str, path: str) -> dict[str, Any]:
    """The latest checkpointed state values of a run ({} before its first checkpoint)."""
    with database_errors(path):
        tup = saver.get_tuple({"configurable": {"thread_id": run_id}})
    return dict(tup.checkpoint["channel_values"]) if tup else {}


def open_checkpointer(path: str = MEMORY):
    """A LangGraph SqliteSaver on ``path`` (":memory:" for a throwaway one)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(connect(path))
    with database_errors(path):
        saver.setup()
    return saver


@dataclass
class RunRecord:
    id: str
    task: str
    status: str
    started: float
    updated: float
    pid: int | None
    host: str | None
    options: dict[str, Any]
    error: str | None

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "task": self.task,
                "started": _iso(self.started), "updated": _iso(self.updated), "error": self.error}


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts))


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_run_id(run_id: str) -> str:
    if not RUN_ID_PATTERN.match(run_id or ""):
        raise UsageError(f"malformed run id {run_id!r}: use letters, digits, '.', '_' or '-' (max 64)")
    return run_id


class RunStore:
    """Who ran what, when, and how it ended. The checkpoints themselves live in the saver's tables."""

    def __init__(self, conn: sqlite3.Connection, path: str = MEMORY):
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: str) -> "RunStore":
        return cls(connect(path), path)

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        with database_errors(self.path):
            return self.conn.execute(sql, params).fetchall()

    def _write(self, sql: str, params: tuple) -> None:
        with database_errors(self.path, writing=True), self.conn:  # one transaction, committed or rolled back
            self.conn.execute(sql, params)

    def create(self, task: str, options: dict[str, Any], run_id: str | None = None) -> str:
        run_id = check_run_id(run_id) if run_id else uuid.uuid4().hex[:8]
        now = time.time()
        try:
            self._write(
                "INSERT INTO hierplan_runs (id, task, status, started, updated, pid, host, options)"
                " VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
                (run_id, task, now, now, os.getpid(), socket.gethostname(), json.dumps(options)))
        except sqlite3.IntegrityError as exc:
            raise UsageError(f"a run with id {run_id!r} already exists; resume it with: hierplan resume {run_id}") from exc
        return run_id

    def set_status(self, run_id: str, status: str, error: str | None = None) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        pid = os.getpid() if status == "running" else None
        self._write("UPDATE hierplan_runs SET status=?, updated=?, pid=?, host=?, error=? WHERE id=?",
                          (status, time.time(), pid, socket.gethostname(), error, run_id))

    def get(self, run_id: str) -> RunRecord:
        rows = self._read("SELECT * FROM hierplan_runs WHERE id=?", (check_run_id(run_id),))
        row = rows[0] if rows else None
        if row is None:
            raise RunNotFoundError(f"no run {run_id!r} in this database (list runs with: hierplan runs)")
        return self._record(row)

    def list(self) -> list[RunRecord]:
        rows = self._read("SELECT * FROM hierplan_runs ORDER BY started DESC")
        return [self._record(r) for r in rows]

    @staticmethod
    def _record(row: tuple) -> RunRecord:
        run_id, task, status, started, updated, pid, host, options, error = row
        if status == "running" and host == socket.gethostname() and not _alive(pid):
            status = "interrupted"  # its process is gone
        return RunRecord(run_id, task, status, started, updated, pid, host, json.loads(options or "{}"), error)
