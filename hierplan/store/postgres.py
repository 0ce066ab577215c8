"""The Postgres back end: LangGraph's PostgresSaver and the runs table, over psycopg 3 connection pools.

Who is running a run, seen from any machine: the process that runs it holds a session-level advisory lock
(its *lease*, keyed by the run's ``lease`` column) on a connection of its own for as long as it runs it. A row
says 'running' but nobody holds its lease: the process is gone (killed, crashed, its machine lost, or its
connection cut by a Postgres restart), so the run is shown ``interrupted`` and anyone may resume it. Taking the
lease is atomic, so two machines resuming the same run cannot both proceed. The server drops the lock as soon
as the session ends: at once for a killed process (its socket closes), within about KEEPALIVE_IDLE_S +
KEEPALIVE_INTERVAL_S * KEEPALIVE_COUNT seconds (TCP keepalives) for a machine that vanished.

A Postgres restart fails the running run at its next checkpoint write (the checkpointer's pool does not test
connections before use, on purpose: a run that rode through the restart would run on without its lease); its
status write then goes through the runs pool, which does test and reconnect. ``hierplan resume`` continues it.
Passwords never reach a message: every text shown goes through display_name() / redact().
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import tempfile
import threading
import time
import urllib.parse
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterator

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.postgres import PostgresStore
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from hierplan.config import PG_FILE_CHUNK_BYTES, file_cache_dir
from hierplan.errors import DatabaseError, UsageError
from hierplan.store.files import FileStore, FileStoreError, LocalFileStore, StoredFile, short
from hierplan.store.runs import COLUMNS, RunExists, RunRecord, RunStore

CONNECT_TIMEOUT_S = 10  # an unreachable host fails in this time (libpq waits forever by default)
POOL_WAIT_S = 15  # how long a query waits for a pooled connection, e.g. while Postgres restarts
KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT = 20, 5, 4  # the server drops a vanished run's lease
LOCK_NAMESPACE = 0x68706C6E  # "hpln": first key of every advisory lock hierplan takes
SETUP_LOCK = 0  # second key of the schema set-up lock (run leases are >= 1)
SETUP_WAIT_S = 60

# psycopg logs a lost connection, and its pool each failed reconnection, as warnings; with no handler set up
# Python prints those to stderr, breaking the CLI's one-line errors. The error that matters reaches the user.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hierplan_runs (
    id TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL,
    started DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL, pid INTEGER, host TEXT,
    options TEXT NOT NULL DEFAULT '{}', error TEXT, lease SERIAL NOT NULL
)"""

# The file store (hierplan.store.files): a file's bytes as rows of config.PG_FILE_CHUNK_BYTES; its row in
# hierplan_files is written last, in the same transaction, so a listed file is always whole.
_FILES_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS hierplan_files (
    sha256 TEXT PRIMARY KEY, size BIGINT NOT NULL, chunks INTEGER NOT NULL, stored DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS hierplan_file_chunks (
    sha256 TEXT NOT NULL, n INTEGER NOT NULL, data BYTEA NOT NULL, PRIMARY KEY (sha256, n))""",
)

_LEASE_HELD = """EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid::bigint = %s AND l.objid::bigint = r.lease AND l.objsubid = 2)"""

_set_up: set[str] = set()  # URLs whose schema this process has already checked
_pools: dict[tuple[str, str], ConnectionPool] = {}
_pools_lock = threading.Lock()


def display_name(url: str) -> str:
    """The URL with its password (user:PASSWORD@ or ?password=) replaced by ***."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, hostpart = rest.rpartition("@")
    if at and ":" in userinfo:
        rest = f"{userinfo.split(':', 1)[0]}:***@{hostpart}"
    return re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", f"{scheme}{sep}{rest}")


def _secrets(url: str) -> list[str]:
    found = []
    userinfo = url.partition("://")[2].rpartition("@")[0]
    if ":" in userinfo:
        found.append(userinfo.split(":", 1)[1])
    found += re.findall(r"(?i)[?&]password=([^&]*)", url)
    found += [urllib.parse.unquote(s) for s in found]
    return sorted({s for s in found if s}, key=len, reverse=True)


def redact(text: Any, url: str) -> str:
    """One line of an error's text, without the URL's password (libpq does not echo it; this makes sure)."""
    text = " ".join(str(text).split()).replace(url, display_name(url))
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text


def _reason(exc: BaseException, url: str) -> str:
    if isinstance(exc, PoolTimeout):
        return f"no connection within {POOL_WAIT_S} s (is the server up?)"
    return redact(exc, url) or type(exc).__name__


@contextmanager
def database_errors(url: str, writing: bool = False) -> Iterator[None]:
    """Turn psycopg's errors (connection lost, server down, permission, timeout) into one clear DatabaseError."""
    try:
        yield
    except psycopg.Error as exc:  # PoolTimeout is one too
        verb = "write to" if writing else "use"
        raise DatabaseError(f"cannot {verb} database {display_name(url)}: {_reason(exc, url)}") from None


def _connect_kwargs(url: str) -> dict[str, Any]:
    try:
        given = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise UsageError(f"bad database URL {display_name(url)}: {redact(exc, url)}") from None
    return {"autocommit": True, **({} if "connect_timeout" in given else {"connect_timeout": CONNECT_TIMEOUT_S})}


def _connect(url: str, **kwargs: Any) -> psycopg.Connection:
    try:
        return psycopg.connect(url, **_connect_kwargs(url), **kwargs)
    except psycopg.Error as exc:
        # `from None`: the chained psycopg error would carry the same text into --debug tracebacks unmasked
        raise DatabaseError(f"cannot connect to database {display_name(url)}: {_reason(exc, url)}") from None


def _setup(url: str) -> None:
    """Create the checkpoint tables (PostgresSaver.setup, its migrations) and the runs table if missing."""
    if url in _set_up:
        return
    with _connect(url, row_factory=dict_row) as conn, database_errors(url, writing=True):
        # Two processes' first use at once would race on CREATE TABLE and the migration rows, so one waits.
        # It polls instead of blocking in pg_advisory_lock: the saver's migrations CREATE INDEX CONCURRENTLY,
        # which waits for every open transaction, a blocked lock request included (a deadlock).
        deadline = time.monotonic() + SETUP_WAIT_S
        while not conn.execute("SELECT pg_try_advisory_lock(%s, %s) AS got",
                               (LOCK_NAMESPACE, SETUP_LOCK)).fetchone()["got"]:
            if time.monotonic() > deadline:
                raise DatabaseError(f"cannot set up database {display_name(url)}: another process has been "
                                    f"setting it up for {SETUP_WAIT_S} s")
            time.sleep(0.05)
        PostgresSaver(conn).setup()
        PostgresStore(conn).setup()  # the users' long-term memories (nodes.memory): tables store, store_migrations
        conn.execute(_SCHEMA)
        for statement in _FILES_SCHEMA:
            conn.execute(statement)
    _set_up.add(url)


def _pool(url: str, kind: str) -> ConnectionPool:
    """This process's pool of ``kind`` for ``url``, opened on first use and closed at exit.

    Shared, not one per opener: the CLI and the tests open checkpointers and stores many times, and a pool
    dropped without close() is collected in whichever thread lets it go, which cannot join its own workers.
    One connection each: PostgresSaver runs one query at a time under its own lock, and so does a RunStore.
    "checkpoints" does not test a connection before use (see the module's docstring); "runs" and "files" do.
    """
    with _pools_lock:
        pool = _pools.get((url, kind))
        if pool is None or pool.closed:
            connection = _connect_kwargs(url)
            if kind in ("checkpoints", "memories"):  # what PostgresSaver's and PostgresStore's from_conn_string set
                connection.update(prepare_threshold=0, row_factory=dict_row)
            check = ConnectionPool.check_connection if kind != "checkpoints" else None
            pool = _pools[(url, kind)] = ConnectionPool(
                url, min_size=1, max_size=1, timeout=POOL_WAIT_S, num_workers=1, name=f"hierplan-{kind}",
                kwargs=connection, check=check, open=True)
        return pool


def close_pools(url: str | None = None) -> None:
    """Close this process's pools (for ``url``, or all); the next use opens new ones."""
    with _pools_lock:
        keys = [k for k in _pools if url is None or k[0] == url]
        pools = [_pools.pop(k) for k in keys]
    for pool in pools:
        pool.close()


atexit.register(close_pools)


def open_checkpointer(url: str):
    """A LangGraph PostgresSaver on a connection pool (the settings its from_conn_string uses)."""
    _setup(url)
    return PostgresSaver(_pool(url, "checkpoints"))


def open_memory_store(url: str):
    """A LangGraph PostgresStore (the users' long-term memories) on a connection pool of its own."""
    _setup(url)
    return PostgresStore(_pool(url, "memories"))


def open_run_store(url: str) -> "PostgresRunStore":
    _setup(url)
    return PostgresRunStore(url)


class PostgresRunStore(RunStore):
    """The runs table in Postgres; liveness by lease (see the module's docstring), not by pid."""

    def __init__(self, url: str):
        super().__init__(url)
        self.pool = _pool(url, "runs")
        self._leases: dict[str, psycopg.Connection] = {}

    def _execute(self, sql: str, params: tuple, writing: bool) -> list[tuple]:
        with database_errors(self.db, writing), self.pool.connection() as conn:
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def _insert(self, row: tuple) -> None:
        with database_errors(self.db, writing=True), self.pool.connection() as conn:
            try:
                conn.execute(f"INSERT INTO hierplan_runs ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                             row)
            except psycopg.errors.UniqueViolation:
                raise RunExists(row[0]) from None

    def _update(self, run_id, status, updated, pid, host, error) -> None:
        self._execute("UPDATE hierplan_runs SET status=%s, updated=%s, pid=%s, host=%s, error=%s WHERE id=%s",
                      (status, updated, pid, host, error, run_id), writing=True)

    def _set_options(self, run_id: str, options: str) -> None:
        self._execute("UPDATE hierplan_runs SET options=%s WHERE id=%s", (options, run_id), writing=True)

    def _select(self, run_id: str | None) -> list[RunRecord]:
        where, params = ("WHERE r.id = %s", (run_id,)) if run_id is not None else ("ORDER BY r.started DESC", ())
        rows = self._execute(f"SELECT {', '.join('r.' + c for c in COLUMNS.split(', '))}, {_LEASE_HELD} "
                             f"FROM hierplan_runs r {where}", (LOCK_NAMESPACE, *params), writing=False)
        return [self.record(row, alive=row[-1]) for row in rows]

    def _claim(self, run_id: str) -> None:
        if run_id in self._leases:
            return
        conn = _connect(self.db)  # a session of its own: the lease lasts exactly as long as this connection
        try:
            with database_errors(self.db, writing=True):
                for setting, value in (("tcp_keepalives_idle", KEEPALIVE_IDLE_S),
                                       ("tcp_keepalives_interval", KEEPALIVE_INTERVAL_S),
                                       ("tcp_keepalives_count", KEEPALIVE_COUNT)):
                    conn.execute(f"SET {setting} = {int(value)}")
                row = conn.execute("SELECT pg_try_advisory_lock(%s, lease) FROM hierplan_runs WHERE id = %s",
                                   (LOCK_NAMESPACE, run_id)).fetchone()
        except BaseException:
            conn.close()
            raise
        if not (row and row[0]):
            conn.close()
            raise UsageError(f"run {run_id} is running in another process; wait for it or stop it first")
        self._leases[run_id] = conn

    def _release(self, run_id: str) -> None:
        conn = self._leases.pop(run_id, None)
        if conn is not None:
            conn.close()  # ends the session: Postgres drops its advisory locks

    def close(self) -> None:
        for run_id in list(self._leases):
            self._release(run_id)


def open_file_store(url: str) -> "PostgresFileStore":
    _setup(url)
    return PostgresFileStore(url, str(file_cache_dir()))


class PostgresFileStore(FileStore):
    """The file store in the database itself (hierplan.store.files): a run resumed on any machine that reaches the
    database finds its files. Each file is read back once per machine into a local cache folder by hash (itself a
    LocalFileStore), which is what the sandbox mounts."""

    def __init__(self, url: str, cache_dir: str):
        self.url = url
        self.cache = LocalFileStore(cache_dir)
        self.location = f"{display_name(url)} (table hierplan_files)"
        self.pool = _pool(url, "files")

    def has(self, sha256: str) -> bool:
        with database_errors(self.url), self.pool.connection() as conn:
            return conn.execute("SELECT 1 FROM hierplan_files WHERE sha256 = %s", (sha256,)).fetchone() is not None

    def put_stream(self, source: BinaryIO, limit: int | None = None) -> StoredFile:
        """Copied into the local cache (hashed on the way), then into the database unless it is there already."""
        stored = self.cache.put_stream(source, limit)
        if not self.has(stored.sha256):
            self._upload(self.cache.local_path(stored.sha256, "(new)"), stored)
        return stored

    def _upload(self, path: str, stored: StoredFile) -> None:
        with database_errors(self.url, writing=True), self.pool.connection() as conn, conn.transaction(), \
                open(path, "rb") as f:
            n = 0
            while chunk := f.read(PG_FILE_CHUNK_BYTES):
                # another process storing the same file waits here on the key, then keeps its rows
                conn.execute("INSERT INTO hierplan_file_chunks (sha256, n, data) VALUES (%s, %s, %s) "
                             "ON CONFLICT DO NOTHING", (stored.sha256, n, chunk))
                n += 1
            conn.execute("INSERT INTO hierplan_files (sha256, size, chunks, stored) VALUES (%s, %s, %s, %s) "
                         "ON CONFLICT DO NOTHING", (stored.sha256, stored.size, n, time.time()))

    def local_path(self, sha256: str, name: str) -> str:
        """The file in this machine's cache, read back from the database first when it is not there yet (checked
        against its sha256 on the way). A damaged copy in the cache is only a cache's: read back again."""
        if self.cache.has(sha256):
            try:
                return self.cache.local_path(sha256, name)
            except FileStoreError:
                os.unlink(self.cache.path_of(sha256))
        if not self.cache.has(sha256):
            with database_errors(self.url), self.pool.connection() as conn:
                row = conn.execute("SELECT size, chunks FROM hierplan_files WHERE sha256 = %s", (sha256,)).fetchone()
                if row is None:
                    raise FileStoreError(f"file {name} (sha256 {short(sha256)}…) is missing from the file store "
                                         f"{self.location}; the run cannot go on without it")
                self._download(conn, sha256, name, row[1])
        return self.cache.local_path(sha256, name)

    def _download(self, conn: psycopg.Connection, sha256: str, name: str, chunks: int) -> None:
        digest, size = hashlib.sha256(), 0
        fd, tmp = tempfile.mkstemp(dir=self.cache.incoming_folder(), prefix="db-")
        try:
            with os.fdopen(fd, "wb") as f:
                for n in range(chunks):  # one row at a time: bounded memory at any size
                    row = conn.execute("SELECT data FROM hierplan_file_chunks WHERE sha256 = %s AND n = %s",
                                       (sha256, n)).fetchone()
                    data = bytes(row[0]) if row else b""
                    digest.update(data)
                    size += len(data)
                    f.write(data)
            if digest.hexdigest() != sha256:
                raise FileStoreError(f"file {name}: its copy in {self.location} no longer matches its sha256 "
                                     f"({short(sha256)}…); it was changed or damaged, and the run cannot use it")
            self.cache.adopt(tmp, StoredFile(sha256, size))
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
