"""Runs started from the page: each works in a thread of the server process, on the one model the server
loaded, through the CLI's own code (``run_cmd.execute``, ``prepare_resume``, ``prepare_fork``).

A run belongs to the server, not to a browser: closing the page stops nothing. When the server stops, the runs
still working are marked ``interrupted`` (a killed server's runs read as interrupted anyway: their recorded
process is gone), and ``hierplan resume`` or the page's Resume button continues them.
"""

from __future__ import annotations

import argparse
import logging
import threading
from typing import Any

from hierplan.cli.output import JsonReporter
from hierplan.errors import HierplanError, UsageError
from hierplan.store import RunStore
from hierplan.ui.hub import Hub

log = logging.getLogger("hierplan.ui")
STOPPED_ERROR = "the web page's server (hierplan ui) stopped while the run worked"


class PageReporter(JsonReporter):
    """The CLI's --json events, sent to the page's event streams instead of stdout."""

    def __init__(self, hub: Hub, run_id: str):
        super().__init__()
        self.hub, self.run_id = hub, run_id

    def emit(self, event: str, **fields: Any) -> None:
        self.hub.publish(self.run_id, {"event": event, **fields})

    def status(self, text: str) -> None:
        self.emit("status", text=text)


class Runner:
    """Starts, decides, resumes and forks runs; loads the model once, on first use."""

    def __init__(self, db: str, model_options: dict[str, Any], hub: Hub | None = None):
        from hierplan.cli.options import MODEL_KEYS

        self.db = db
        # What `hierplan ui` was given (--model, --base-url, ...): the options every run here starts or
        # continues with, as `hierplan resume --model X` would.
        self.model_options = {k: model_options.get(k) for k in MODEL_KEYS}
        self.hub = hub or Hub()
        self._model = None
        self._model_lock = threading.Lock()
        self._lock = threading.RLock()  # one decision at a time: two clicks must not start one run twice
        self._threads: dict[str, threading.Thread] = {}

    # --- the model ---------------------------------------------------------------------------------------
    def model(self, options: dict[str, Any] | None = None):
        """The one model of this server (``options`` is ignored: a run's model options are the server's)."""
        with self._model_lock:
            if self._model is None:
                from hierplan.cli.options import load_model

                self._model = load_model(self.model_options)
            return self._model

    # --- actions ------------------------------------------------------------------------------------------
    def args(self, decision: str | dict | None = None) -> argparse.Namespace:
        """The command line these actions stand for: `hierplan resume --json [--approve]` with the server's options."""
        return argparse.Namespace(json=True, debug=False, decision=decision, **self.model_options)

    def start(self, task: str, run_options: dict[str, Any], run_id: str | None = None) -> str:
        """`hierplan run TASK --json`; ``run_options`` are the form's (approve, temperature, seed, ...)."""
        from hierplan.cli.options import model_options
        from hierplan.cli.run_cmd import read_task

        task = read_task(task)
        options = {**model_options(self.args()), **run_options}
        store = RunStore.open(self.db)
        try:
            run_id = store.create(task, options, run_id)
        except BaseException:
            store.close()
            raise
        self._spawn(run_id, store, {"task": task}, options, resumed=False, task=task)
        return run_id

    def resume(self, run_id: str, decision: str | dict | None = None) -> str:
        """`hierplan resume RUN_ID [--approve|--reject]`, or an edit with its plan ({"action": "edit", ...})."""
        from hierplan.cli.run_cmd import prepare_resume

        with self._lock:
            if run_id in self._threads:
                raise UsageError(f"run {run_id} is still running here; wait for it")
            store = RunStore.open(self.db)
            try:
                if decision is not None and store.get(run_id).status != "waiting":
                    raise UsageError(f"run {run_id} is not waiting for approval")
                record, options = prepare_resume(store, run_id, self.args(decision))
            except BaseException:
                store.close()
                raise
            self._spawn(record.id, store, None, options, resumed=True, task=record.task, decision=decision)
        return record.id

    def fork(self, run_id: str, checkpoint: str) -> str:
        """`hierplan fork RUN_ID --at CHECKPOINT`."""
        from hierplan.cli.history_cmd import prepare_fork

        store = RunStore.open(self.db)
        try:
            record, new_id, options = prepare_fork(self.db, store, run_id, checkpoint, None, self.args())
        except BaseException:
            store.close()
            raise
        self._spawn(new_id, store, None, options, resumed=True, task=record.task)
        return new_id

    def working(self) -> list[str]:
        with self._lock:
            return list(self._threads)

    def _spawn(self, run_id: str, store: RunStore, graph_input, options, *, resumed: bool, task: str,
               decision=None) -> None:
        self.hub.begin(run_id)
        # daemon: a stopping server does not wait for its runs; they stay resumable from their checkpoints
        thread = threading.Thread(target=self._work, name=f"hierplan-run-{run_id}", daemon=True,
                                  args=(run_id, store, graph_input, options, resumed, task, decision))
        with self._lock:
            self._threads[run_id] = thread
        thread.start()

    def _work(self, run_id, store, graph_input, options, resumed, task, decision) -> None:
        from hierplan.cli.run_cmd import execute

        try:
            execute(run_id, graph_input, options, self.db, store, self.args(decision), resumed=resumed, task=task,
                    reporter=PageReporter(self.hub, run_id), load=self.model)
        except HierplanError as exc:  # recorded by execute as the run's status and error; the page shows it
            log.info("run %s: %s", run_id, exc)
        except Exception:  # noqa: BLE001 - a bug: the run is marked failed by execute; keep the server up
            log.exception("run %s", run_id)
        finally:
            with self._lock:
                self._threads.pop(run_id, None)
            store.close()
            self.hub.finish(run_id)

    def stop(self) -> None:
        """The server stops: the runs still working here are interrupted, to be resumed later."""
        for run_id in self.working():
            store = RunStore.open(self.db)
            try:
                store.set_status(run_id, "interrupted", error=STOPPED_ERROR)
            except HierplanError as exc:
                log.warning("run %s: could not mark it interrupted: %s", run_id, exc)
            finally:
                store.close()
