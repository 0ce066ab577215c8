"""The runs table's rows and the logic both back ends share; each back end supplies the SQL and the liveness rule."""

from __future__ import annotations

import json
import os
import re
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from hierplan.errors import RunNotFoundError, UsageError

RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
STATUSES = ("running", "waiting", "interrupted", "failed", "done")
# The first nine columns, in this order, on both back ends (Postgres adds a lease key after them).
COLUMNS = "id, task, status, started, updated, pid, host, options, error"
# The loaded model's name, engine and quantization, kept in the options column (not an option one can pass).
MODEL_INFO_KEY = "loaded_model"
# Each role's loaded model (hierplan.roles), kept beside it only when the roles' models differ.
ROLE_MODELS_KEY = "loaded_models"
# A turn of a thread (``hierplan run --thread T``): the thread's id and the turn's number, kept in the options
# column (no other column changes, so a database made before threads needs no migration).
THREAD_KEY = "thread"
TURN_KEY = "turn"


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

    @property
    def model(self) -> dict[str, Any] | None:
        """The model the run last ran on (name, engine, quantization), as loaded; None before it loaded."""
        return self.options.get(MODEL_INFO_KEY)

    @property
    def models(self) -> dict[str, Any] | None:
        """Each role's model (planner, executor, aggregator), when they differ; None when one model ran them
        all (``model`` is the executor's)."""
        return self.options.get(ROLE_MODELS_KEY)

    @property
    def thread(self) -> str | None:
        """The thread this run is a turn of; None for a run started on its own."""
        return self.options.get(THREAD_KEY)

    @property
    def turn(self) -> int | None:
        """Its turn's number in its thread (1 for the first); None for a run started on its own."""
        return self.options.get(TURN_KEY)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "task": self.task,
                "started": _iso(self.started), "updated": _iso(self.updated), "error": self.error,
                "model": self.model, **({"models": self.models} if self.models else {}),
                **({"thread": self.thread, "turn": self.turn} if self.thread else {})}


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts))


def check_run_id(run_id: str) -> str:
    if not RUN_ID_PATTERN.match(run_id or ""):
        raise UsageError(f"malformed run id {run_id!r}: use letters, digits, '.', '_' or '-' (max 64)")
    return run_id


class RunExists(Exception):
    """Raised by a back end's _insert when the id is taken (turned into a UsageError here)."""


class RunStore:
    """Who ran what, when, and how it ended. The checkpoints themselves live in the saver's tables.

    ``RunStore.open(db)`` picks the back end from ``db`` (a SQLite path or a postgresql:// URL). A back end
    implements _insert, _update, _select (which decides whether a 'running' row's process still lives) and may
    claim/release a run while this process runs it.
    """

    def __init__(self, db: str):
        self.db = db

    @classmethod
    def open(cls, db: str) -> "RunStore":
        from hierplan.store import backend

        return backend(db).open_run_store(db)

    # --- what a back end provides ---------------------------------------------------------------------
    def _insert(self, row: tuple) -> None:  # raises RunExists when the id is taken
        raise NotImplementedError

    def _update(self, run_id: str, status: str, updated: float, pid: int | None, host: str,
                error: str | None) -> None:
        raise NotImplementedError

    def _set_options(self, run_id: str, options: str) -> None:
        raise NotImplementedError

    def _select(self, run_id: str | None) -> list[RunRecord]:
        """One run (or every run, newest first), with 'running' shown as 'interrupted' when its process is gone."""
        raise NotImplementedError

    def _claim(self, run_id: str) -> None:
        """This process now runs ``run_id`` (raises UsageError if another live process does)."""

    def _release(self, run_id: str) -> None:
        """This process no longer runs ``run_id``."""

    def close(self) -> None:
        """Let go of connections and claims (the process exiting does the same)."""

    # --- shared ---------------------------------------------------------------------------------------
    def create(self, task: str, options: dict[str, Any], run_id: str | None = None) -> str:
        run_id = check_run_id(run_id) if run_id else uuid.uuid4().hex[:8]
        now = time.time()
        try:
            self._insert((run_id, task, "running", now, now, os.getpid(), socket.gethostname(),
                          json.dumps(options), None))
        except RunExists as exc:
            raise UsageError(f"a run with id {run_id!r} already exists; resume it with: hierplan resume {run_id}") from exc
        self._claim(run_id)
        return run_id

    def set_model(self, run_id: str, info: dict[str, Any] | None, roles: dict[str, Any] | None = None) -> None:
        """Record the model the run runs on (the executor's), and each role's when they differ (kept with its
        options: no other column changes)."""
        options = {k: v for k, v in self.get(run_id).options.items() if k != ROLE_MODELS_KEY}
        self._set_options(run_id, json.dumps({**options, MODEL_INFO_KEY: info,
                                               **({ROLE_MODELS_KEY: roles} if roles else {})}))

    def set_status(self, run_id: str, status: str, error: str | None = None) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        if status == "running":
            self._claim(run_id)
        try:
            self._update(run_id, status, time.time(), os.getpid() if status == "running" else None,
                         socket.gethostname(), error)
        finally:
            if status != "running":
                self._release(run_id)

    def get(self, run_id: str) -> RunRecord:
        records = self._select(check_run_id(run_id))
        if not records:
            raise RunNotFoundError(f"no run {run_id!r} in this database (list runs with: hierplan runs)")
        return records[0]

    def list(self) -> list[RunRecord]:
        return self._select(None)

    @staticmethod
    def record(row: tuple, alive: bool) -> RunRecord:
        run_id, task, status, started, updated, pid, host, options, error = row[:9]
        if status == "running" and not alive:
            status = "interrupted"  # its process is gone
        return RunRecord(run_id, task, status, started, updated, pid, host, json.loads(options or "{}"), error)
