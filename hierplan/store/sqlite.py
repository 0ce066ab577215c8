"""The SQLite back end: LangGraph's SQLite checkpointer plus the runs table, in one file."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from hierplan import processes
from hierplan.errors import DatabaseError
from hierplan.store.runs import COLUMNS, RunExists, RunRecord, RunStore

MEMORY = ":memory:"
BUSY_TIMEOUT_MS = 30_000
WAL_SWITCH_RETRY_S = 0.05

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
            enable_wal(conn)  # readers never block the writer of a live run
            # In WAL mode NORMAL survives a killed process (the OS has every commit); only a power cut can
            # lose the last commits. Saves an fsync per checkpoint.
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
        conn.commit()
    return conn


def enable_wal(conn: sqlite3.Connection) -> None:
    """Switch the file to WAL mode, retrying while another process switches it too.

    Two processes opening a new file at once (Ray actors, two CLI runs) both hold a shared lock and both want
    the exclusive lock the switch needs; SQLite answers one of them "database is locked" at once, without
    calling the busy handler, since waiting could deadlock. Once the other has switched, the retry is a no-op.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(WAL_SWITCH_RETRY_S)


def open_checkpointer(path: str = MEMORY):
    """A LangGraph SqliteSaver on ``path`` (":memory:" for a throwaway one)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(connect(path))
    with database_errors(path):
        saver.setup()
    return saver


def open_file_store(path: str = MEMORY):
    """PATH.files/ next to the database file (hierplan.store.files); this process's temporary store for ":memory:"."""
    from hierplan.store.files import sqlite_store

    return sqlite_store(path)


def open_memory_store(path: str = MEMORY):
    """A LangGraph SqliteStore in the same file as the checkpoints (its own tables, ``store`` and
    ``store_migrations``), on a connection of its own in autocommit mode, as the store's transactions need."""
    from langgraph.store.sqlite import SqliteStore

    conn = connect(path)
    conn.isolation_level = None  # the store opens and commits its own transactions (BEGIN ... COMMIT)
    store = SqliteStore(conn)
    with database_errors(path, writing=True):
        store.setup()
    return store


def display_name(path: str) -> str:
    return path


def open_run_store(path: str) -> "SqliteRunStore":
    return SqliteRunStore(connect(path), path)


class SqliteRunStore(RunStore):
    """The runs table next to the checkpoints in one SQLite file. A 'running' run whose recorded process is gone
    from this host is interrupted; one from another host (a file on a shared disk) is taken as running."""

    def __init__(self, conn: sqlite3.Connection, path: str = MEMORY):
        super().__init__(path)
        self.conn = conn
        self.path = path

    def _write(self, sql: str, params: tuple) -> None:
        with database_errors(self.path, writing=True), self.conn:  # one transaction, committed or rolled back
            self.conn.execute(sql, params)

    def _insert(self, row: tuple) -> None:
        try:
            self._write(f"INSERT INTO hierplan_runs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.IntegrityError as exc:
            raise RunExists(row[0]) from exc

    def _update(self, run_id, status, updated, pid, host, error) -> None:
        self._write("UPDATE hierplan_runs SET status=?, updated=?, pid=?, host=?, error=? WHERE id=?",
                    (status, updated, pid, host, error, run_id))

    def _set_options(self, run_id: str, options: str) -> None:
        self._write("UPDATE hierplan_runs SET options=? WHERE id=?", (options, run_id))

    def _select(self, run_id: str | None) -> list[RunRecord]:
        sql = f"SELECT {COLUMNS} FROM hierplan_runs"
        sql += " WHERE id=?" if run_id is not None else " ORDER BY started DESC"
        with database_errors(self.path):
            rows = self.conn.execute(sql, (run_id,) if run_id is not None else ()).fetchall()
        here = socket.gethostname()
        return [self.record(r, alive=r[6] != here or processes.exists(r[5])) for r in rows]

    def close(self) -> None:
        self.conn.close()
