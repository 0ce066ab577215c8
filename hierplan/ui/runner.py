"""Runs started from the page: each works in a thread of the server process, on the one model the server
loaded, through the run service (hierplan.app.service), as the CLI's runs do.

A run belongs to the server, not to a browser: closing the page stops nothing. When the server stops, the runs
still working are marked ``interrupted`` (a killed server's runs read as interrupted anyway: their recorded
process is gone), and ``hierplan resume`` or the page's Resume button continues them.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Mapping, Sequence

from hierplan.app.events import Events
from hierplan.app.service import Decision, Run, RunService
from hierplan.errors import HierplanError, UsageError
from hierplan.options import RunOptions
from hierplan.store import RunStore
from hierplan.ui.hub import Hub

log = logging.getLogger("hierplan.ui")
STOPPED_ERROR = "the web page's server (hierplan ui) stopped while the run worked"


class PageReporter(Events):
    """The run's events, sent to the page's event streams."""

    def __init__(self, hub: Hub, run_id: str):
        super().__init__()
        self.hub, self.run_id = hub, run_id

    def emit(self, event: str, **fields: Any) -> None:
        self.hub.publish(self.run_id, {"event": event, **fields})

    def status(self, text: str) -> None:
        self.emit("status", text=text)


class Runner:
    """Starts, decides, resumes and forks runs in threads; loads the model once, on first use."""

    def __init__(self, db: str, options: Mapping[str, Any], hub: Hub | None = None):
        self.db = db
        # What `hierplan ui` was given (--model, --base-url, --temperature...), by option name: every run here
        # starts or continues with these, as `hierplan resume --model X` would.
        self.options = dict(options)
        self.hub = hub or Hub()
        self.service = RunService(db, load_models=lambda options: self.models())
        self._models = None
        self._model_lock = threading.Lock()
        self._lock = threading.RLock()  # one decision at a time: two clicks must not start one run twice
        self._threads: dict[str, threading.Thread] = {}

    def models(self):
        """The models of this server, one per role (one for all unless it was given --planner-model and the
        like), loaded with the server's own options."""
        with self._model_lock:
            if self._models is None:
                from hierplan.app.agent import load_models

                self._models = load_models(RunOptions.from_dict(self.options))
            return self._models

    def file_limits(self) -> tuple[int, int]:
        """(bytes per file, bytes together) a run started here may attach: the server's --max-file-mb and
        --max-files-mb, else their environment variables and defaults (hierplan.tools.files.file_limits)."""
        return RunOptions.from_dict(self.options).file_limits()

    def mcp_servers(self) -> list[str]:
        """The names of the MCP servers of the server's own --mcp file, which a run's form may choose among
        (mcp_servers); none without one. The page never names a program: only the local user's file does."""
        path = self.options.get("mcp")
        if not path:
            return []
        from hierplan.tools.mcp import read_config

        try:
            return list(read_config(path))
        except UsageError:  # the file changed since `hierplan ui` checked it: a run started now says why
            return []

    # --- actions ------------------------------------------------------------------------------------------
    def start(self, task: str, form_options: Mapping[str, Any], kind: str | None = None,
              run_id: str | None = None, files: Sequence[str | os.PathLike] = (), thread: str | None = None) -> str:
        """A new run; ``form_options`` (by option name) over the server's; ``files`` read and checked as
        `hierplan run --file` reads them, before the run is recorded (the paths may go once this returns);
        ``thread``: the run is that thread's next turn, as `hierplan run --thread`."""
        options = RunOptions.from_dict({**self.options, **form_options})
        return self._spawn(self.service.start(task, options, kind=kind, run_id=run_id, files=files, thread=thread))

    def resume(self, run_id: str) -> str:
        with self._lock:
            self._not_here(run_id)
            return self._spawn(self.service.resume(run_id, self.options))

    def decide(self, run_id: str, decision: Decision) -> str:
        """Approve, reject or edit ({"action": "edit", "plan": ...}) the plan of a run that waits."""
        with self._lock:
            self._not_here(run_id)
            return self._spawn(self.service.decide(run_id, decision, self.options))

    def fork(self, run_id: str, checkpoint: str) -> str:
        return self._spawn(self.service.fork(run_id, checkpoint, self.options))

    def working(self) -> list[str]:
        with self._lock:
            return list(self._threads)

    def _not_here(self, run_id: str) -> None:
        if run_id in self._threads:
            raise UsageError(f"run {run_id} is still running here; wait for it")

    def _spawn(self, run: Run) -> str:
        self.hub.begin(run.id)
        # daemon: a stopping server does not wait for its runs; they stay resumable from their checkpoints
        thread = threading.Thread(target=self._work, args=(run,), name=f"hierplan-run-{run.id}", daemon=True)
        with self._lock:
            self._threads[run.id] = thread
        thread.start()
        return run.id

    def _work(self, run: Run) -> None:
        try:  # no one to ask at an approval stop: the run waits for the page's buttons
            self.service.execute(run, PageReporter(self.hub, run.id))
        except HierplanError as exc:  # recorded by the service as the run's status and error; the page shows it
            log.info("run %s: %s", run.id, exc)
        except Exception:  # noqa: BLE001 - a bug: the run is marked failed by the service; keep the server up
            log.exception("run %s", run.id)
        finally:
            with self._lock:
                self._threads.pop(run.id, None)
            self.hub.finish(run.id)

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
