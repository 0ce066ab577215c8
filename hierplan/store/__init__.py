"""The run database: LangGraph checkpoints plus a small table of runs, in SQLite or Postgres.

``db`` is a SQLite file path (or ":memory:") or a ``postgresql://`` URL; ``backend(db)`` is the one place that
tells them apart. Everything else (the CLI, eval) goes through RunStore.open, open_checkpointer,
open_file_store, read_checkpoint and database_errors, and works the same on both.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

from hierplan.errors import UsageError
from hierplan.store.runs import STATUSES, RunRecord, RunStore, check_run_id

__all__ = ["MEMORY", "STATUSES", "RunRecord", "RunStore", "backend", "check_run_id", "database_errors",
           "display_name", "is_postgres", "open_checkpointer", "open_file_store", "open_memory_store",
           "read_checkpoint"]

MEMORY = ":memory:"
POSTGRES_SCHEMES = ("postgresql", "postgres")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?")


def _scheme(db: str | None) -> str | None:
    match = _URL.match(db or "")
    return match.group(1).lower() if match else None


def is_postgres(db: str | None) -> bool:
    """Whether ``db`` names a Postgres database (postgresql:// or postgres://); imports no driver."""
    return _scheme(db) in POSTGRES_SCHEMES


def backend(db: str) -> ModuleType:
    """The module that handles ``db``: hierplan.store.postgres for postgresql:// URLs, else .sqlite (a path)."""
    match = _URL.match(db or "")
    scheme = _scheme(db)
    if is_postgres(db):
        if not match.group(2):
            raise UsageError(f"write the Postgres URL as {scheme}://user@host/db (with '//')")
        try:
            from hierplan.store import postgres
        except ImportError as exc:  # psycopg or langgraph-checkpoint-postgres is not installed
            raise UsageError(f"a Postgres --db needs {exc.name}: pip install 'hierplan[postgres]'") from exc
        return postgres
    if scheme and match.group(2) and len(scheme) > 1:  # one letter is a Windows drive (C://...)
        raise UsageError(f"unsupported database URL {scheme}://...: give a SQLite file path or a "
                         "postgresql://user@host/db URL")
    from hierplan.store import sqlite

    return sqlite


def display_name(db: str) -> str:
    """``db`` as messages show it: a Postgres URL with its password masked."""
    return backend(db).display_name(db)


def open_checkpointer(db: str = MEMORY):
    """A LangGraph checkpointer on ``db`` (SqliteSaver or PostgresSaver), its tables set up on first use."""
    return backend(db).open_checkpointer(db)


def open_file_store(db: str = MEMORY):
    """The file store of ``db`` (hierplan.store.files): where its runs' files are kept by sha256."""
    return backend(db).open_file_store(db)


def open_memory_store(db: str = MEMORY):
    """The LangGraph store of ``db`` (SqliteStore or PostgresStore) that keeps the users' long-term memories
    (nodes.memory), its tables set up on first use; build_graph(store=...) takes it."""
    return backend(db).open_memory_store(db)


def database_errors(db: str, writing: bool = False) -> AbstractContextManager[None]:
    """A context that turns the back end's errors into one clear hierplan DatabaseError naming ``db``."""
    return backend(db).database_errors(db, writing)


def read_checkpoint(saver, run_id: str, db: str) -> dict[str, Any]:
    """The latest checkpointed state values of a run ({} before its first checkpoint)."""
    with database_errors(db):
        tup = saver.get_tuple({"configurable": {"thread_id": run_id}})
    return dict(tup.checkpoint["channel_values"]) if tup else {}
