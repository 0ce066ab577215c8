"""The run service: a run's lifecycle over one run database, the same for the CLI, the web page and any other
caller. ``start``, ``resume``, ``decide`` and ``fork`` prepare a Run (recorded in the runs table, marked
running); ``execute`` runs it to its end or its approval stop and keeps the runs table in step: the loaded
model, then done, waiting, interrupted or failed. User errors are one-line UsageErrors; a run whose node
raised is a RunFailed, saved and resumable.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

from hierplan.app.agent import (ModelLoader, ModelsLoader, ToolLoader, close_tools, load_model, load_models, load_tools,
                                models_info, with_absolute_paths)
from hierplan.app.events import Reporter, TokenEvents
from hierplan.errors import DatabaseError, HierplanError, UsageError
from hierplan.options import RunOptions
from hierplan.rules.kind import KINDS
from hierplan.store import (RunStore, check_run_id, database_errors, open_checkpointer, open_file_store,
                            open_memory_store, read_checkpoint)
from hierplan.store.files import FileStoreError
from hierplan.store.runs import THREAD_KEY, TURN_KEY, RunRecord

MAX_TASK_CHARS = 20_000
# Beside the options, a run's record keeps the caller's word on the task's kind, the run it was forked from, and the
# JSON Schema its answer is written as (build_graph's response_format: the graph has a node more with one, so every
# resume and fork builds it with the same schema, read from here, not from a file that may have changed).
KIND_KEY = "kind"
FORKED_FROM_KEY = "forked_from"
RESPONSE_FORMAT_KEY = "response_format"

Decision = dict[str, Any]
Ask = Callable[[dict[str, Any]], "Decision | None"]
"""Asked when a run stops for approval, with the request (the plan, or a tool call: nodes.tool_approval): the
decision, or None to leave it waiting."""


class RunFailed(HierplanError):
    """A node raised (the model failed, say); what finished is saved and the run can be resumed."""


@dataclass
class Run:
    """A run ready to execute: recorded, marked running, its store held until ``execute`` ends."""

    id: str
    task: str
    options: RunOptions
    kind: str | None
    """The caller's word on the task's kind; None: the graph decides."""
    store: RunStore
    resumed: bool
    decision: Decision | None = None
    """A decision made before the run continued (``resume --approve``, the page's buttons): used at its
    approval stop (the plan's or a tool call's, whichever it waits at), once."""
    tools: list[Any] = field(default_factory=list)
    """The registered tools its steps may call (its MCP servers'), loaded when the run was prepared and closed
    when ``execute`` ends."""
    files: list[Any] = field(default_factory=list)
    """A new run's files (graph.state.FileDict), checked and copied into the file store when it was prepared;
    their records go into its first checkpoint, which every later resume and fork reads them from."""
    response_format: dict[str, Any] | None = None
    """The JSON Schema its answer is also written as (``hierplan run --schema``), as its record keeps it."""
    history: list[Any] = field(default_factory=list)
    """A new turn of a thread: the earlier turns (records.TurnDict), which go into its first checkpoint."""

    def start_input(self) -> dict[str, Any]:
        return {"task": self.task, **({"kind": self.kind} if self.kind else {}),
                **({"files": self.files} if self.files else {}),
                **({"history": self.history} if self.history else {})}


def check_task(task: str) -> str:
    """The task, stripped: valid UTF-8, not empty, not too long."""
    try:
        task.encode("utf-8")
    except UnicodeEncodeError as exc:  # undecodable bytes in argv arrive as lone surrogates
        raise UsageError(f"the task is not valid UTF-8 (character {exc.start})") from exc
    task = task.strip()
    if not task:
        raise UsageError("the task is empty")
    if len(task) > MAX_TASK_CHARS:
        raise UsageError(f"the task is {len(task):,} characters; the limit is {MAX_TASK_CHARS:,}")
    return task


def read_schema(path: str | os.PathLike) -> dict[str, Any]:
    """A JSON Schema file for a run's answer (``--schema``), read and checked (hierplan.schema.check_response_format):
    a JSON Schema of an object. Anything else is one UsageError line naming the file."""
    from hierplan.schema import check_response_format

    try:
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"schema file {os.fspath(path)}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"schema file {os.fspath(path)}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"schema file {os.fspath(path)} is not JSON: {exc.msg} (line {exc.lineno}, column "
                         f"{exc.colno})") from None
    try:
        return check_response_format(schema)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"schema file {os.fspath(path)}: {exc}") from None


def check_kind(kind: str | None) -> str | None:
    if kind is not None and kind not in KINDS:
        raise UsageError(f"the kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return kind


@contextmanager
def _closing_on_error(store: RunStore) -> Iterator[None]:
    try:
        yield
    except BaseException:
        store.close()
        raise


@contextmanager
def _closing_tools_on_error(tools: Any) -> Iterator[None]:
    """A run that is not prepared after all ends its MCP servers' sessions at once, not at exit."""
    try:
        yield
    except BaseException:
        close_tools(tools)
        raise


def _record(options: RunOptions, kind: str | None, **extra: Any) -> dict[str, Any]:
    """What the runs table keeps of a run's options (never a secret: RunOptions holds none)."""
    return {**options.to_dict(), **({KIND_KEY: kind} if kind else {}), **extra}


class RunService:
    """Runs over one database; ``load`` gives the model for a run's options, ``load_models`` each role's
    (default: ``load`` once per distinct model the options name; the web page: its own), ``load_tools`` the
    registered tools (its MCP servers' tools)."""

    def __init__(self, db: str, load: ModelLoader = load_model, load_tools: ToolLoader = load_tools,
                 load_models: ModelsLoader | None = None):
        from hierplan.tracing import check

        check()  # the OTEL_* variables ask for traces hierplan can send, or this is one line
        self.db = db
        self.load = load
        self.load_tools = load_tools
        self._load_models = load_models

    def load_models(self, options: RunOptions) -> dict[str, Any]:
        """Each role's chat model (hierplan.roles) for a run's options."""
        return self._load_models(options) if self._load_models else load_models(options, self.load)

    # --- preparing a run ------------------------------------------------------------------------------------
    def start(self, task: str, options: RunOptions, *, kind: str | None = None, run_id: str | None = None,
              files: Sequence[str | os.PathLike] = (), response_format: dict[str, Any] | None = None,
              thread: str | None = None) -> Run:
        """A new run. Its files are checked and copied into the database's file store, then its tools loaded,
        first: a run whose file is missing or too large, or whose MCP servers give no tools, is never recorded.
        ``response_format``: a JSON Schema (read_schema) its answer is also written as, kept with the run.
        ``thread``: the run is the thread's next turn (hierplan.app.threads): it sees the earlier turns' tasks,
        answers, files and artifacts; refused while the thread's last turn has not finished."""
        task, kind = check_task(task), check_kind(kind)
        extra: dict[str, Any] = {RESPONSE_FORMAT_KEY: response_format} if response_format is not None else {}
        history: list[Any] = []
        if thread is not None:
            from hierplan.app.threads import next_turn, thread_history, turn_run_id

            runs = RunStore.open(self.db)
            try:
                turn, turns = next_turn(runs, thread)
            finally:
                runs.close()
            history = thread_history(self.db, turns)
            run_id = run_id or turn_run_id(thread, turn)
            extra.update({THREAD_KEY: thread, TURN_KEY: turn})
        loaded = []
        if files:
            from hierplan.tools.files import load_files  # the sandbox package comes with it: only when needed

            # copied into the database's file store by streaming; the run's state holds their records only
            loaded = load_files(files, open_file_store(self.db), limits=options.file_limits())
        if any(t.get("files") or t.get("artifacts") for t in history):
            from hierplan.app.threads import carried_files

            loaded = carried_files(history, loaded, open_file_store(self.db))
        options = with_absolute_paths(options)
        tools = self.load_tools(options)
        with _closing_tools_on_error(tools):
            store = RunStore.open(self.db)
            with _closing_on_error(store):
                run_id = store.create(task, _record(options, kind, **extra), run_id)
        return Run(run_id, task, options, kind, store, resumed=False, tools=tools, files=loaded,
                   response_format=response_format, history=history)

    def resume(self, run_id: str, overrides: Mapping[str, Any] | None = None, *,
               decision: Decision | None = None) -> Run:
        """Continue a run where it stopped, with ``overrides`` (options by name) over the run's own; refused
        while another process runs it."""
        store = RunStore.open(self.db)
        with _closing_on_error(store):
            record = self._stopped(store, run_id)
            return self._continue(store, record, overrides, decision)

    def decide(self, run_id: str, decision: Decision, overrides: Mapping[str, Any] | None = None) -> Run:
        """Continue a run that waits for approval with a person's decision; refused for any other run."""
        store = RunStore.open(self.db)
        with _closing_on_error(store):
            record = self._stopped(store, run_id)
            if record.status != "waiting":
                raise UsageError(f"run {record.id} is not waiting for approval")
            return self._continue(store, record, overrides, decision)

    def fork(self, run_id: str, at: str, overrides: Mapping[str, Any] | None = None,
             new_run_id: str | None = None) -> Run:
        """A new run whose head is checkpoint ``at`` of ``run_id`` (LangGraph time travel onto a new thread);
        the original is untouched."""
        store = RunStore.open(self.db)
        with _closing_on_error(store):
            record = store.get(check_run_id(run_id))
            options, kind = self._options(record, overrides), record.options.get(KIND_KEY)
            saver = open_checkpointer(self.db)
            with database_errors(self.db):
                tup = find_checkpoint(saver, record.id, at)
            self._check_files(record.id, tup.checkpoint["channel_values"])
            tools = self.load_tools(options)
            with _closing_tools_on_error(tools):
                schema = record.options.get(RESPONSE_FORMAT_KEY)
                new_id = store.create(record.task, _record(options, kind, **{FORKED_FROM_KEY: record.id}, **(
                    {RESPONSE_FORMAT_KEY: schema} if schema is not None else {})), new_run_id)
                with database_errors(self.db, writing=True):
                    copy_checkpoint(saver, tup, record.id, at, new_id)
        return Run(new_id, record.task, options, kind, store, resumed=True, tools=tools,
                   response_format=record.options.get(RESPONSE_FORMAT_KEY))

    @staticmethod
    def _stopped(store: RunStore, run_id: str) -> RunRecord:
        record = store.get(check_run_id(run_id))
        if record.status == "running":
            raise UsageError(f"run {record.id} is still running (pid {record.pid}); wait for it or stop it first")
        return record

    def _check_files(self, run_id: str, values: Mapping[str, Any] | None = None) -> None:
        """A stopped run's files are all in the file store, their bytes intact, before it goes on (a FileStoreError
        line naming the first that is not); nothing is copied again."""
        if values is None:
            values = read_checkpoint(open_checkpointer(self.db), run_id, self.db)
        if values.get("files"):
            from hierplan.tools.files import check_files

            try:
                check_files(values["files"], open_file_store(self.db))
            except FileStoreError as exc:
                raise FileStoreError(f"run {run_id}: {exc}") from None

    def _continue(self, store: RunStore, record: RunRecord, overrides: Mapping[str, Any] | None,
                  decision: Decision | None) -> Run:
        options = self._options(record, overrides)
        self._check_files(record.id)
        tools = self.load_tools(options)  # before the run is marked running: a server that fails leaves it as it was
        with _closing_tools_on_error(tools):
            store.set_status(record.id, "running")
        return Run(record.id, record.task, options, record.options.get(KIND_KEY), store, resumed=True,
                   decision=decision, tools=tools, response_format=record.options.get(RESPONSE_FORMAT_KEY))

    @staticmethod
    def _options(record: RunRecord, overrides: Mapping[str, Any] | None) -> RunOptions:
        """The run's options with those given now over them (a different --model, say)."""
        return with_absolute_paths(RunOptions.from_dict(record.options).merged(overrides or {}))

    # --- running it -----------------------------------------------------------------------------------------
    def execute(self, run: Run, reporter: Reporter, ask: Ask | None = None) -> str:
        """Run the graph to its end ("done") or its approval stop ("waiting": ``run.decision``, then ``ask``,
        gave no decision). Ctrl-C leaves the run interrupted and is raised again; a node's failure leaves it
        failed and is raised as RunFailed; an unusable decision leaves it waiting and is raised."""
        try:
            return self._execute(run, reporter, ask)
        except KeyboardInterrupt:
            reporter.close()
            _record_status(run, "interrupted")
            reporter.run_finished(run.id, "interrupted", error="interrupted by the user")
            raise
        except UsageError:  # an unusable decision (an invalid edited plan): the run still waits
            reporter.close()
            _record_status(run, "waiting")
            raise
        except Exception as exc:
            reporter.close()
            error = f"{type(exc).__name__}: {exc}"
            _record_status(run, "failed", error)
            reporter.run_finished(run.id, "failed", error=error)
            raise RunFailed(f"run {run.id} failed: {error}; what finished is saved, continue with: "
                            f"hierplan resume {run.id}") from exc
        finally:
            run.store.close()
            close_tools(run.tools)  # its MCP servers' sessions, and a stdio server's process, end with the run
            from hierplan.tracing import flush

            flush()  # the run's traces leave before the command that ran it ends

    def _execute(self, run: Run, reporter: Reporter, ask: Ask | None) -> str:
        from langgraph.types import Command

        from hierplan.graph.builder import build_graph

        reporter.status("loading the model")
        models = self.load_models(run.options)
        info, roles = models_info(models)
        if info or roles:
            run.store.set_model(run.id, info, roles)
        graph = build_graph(models, open_checkpointer(self.db), options=run.options, tools=run.tools,
                            file_store=open_file_store(self.db), response_format=run.response_format,
                            store=open_memory_store(self.db))
        config = {"configurable": {"thread_id": run.id}}
        state = graph.get_state(config)
        reporter.run_started(run.id, run.task, resumed=run.resumed, model=info, models=roles,
                             kind=state.values.get("kind") or run.kind)
        reporter.status("planning")
        # A new run starts from its task; one stopped before its first checkpoint starts over; others go on.
        graph_input: Any = None if state.created_at is not None else run.start_input()
        tokens = TokenEvents()
        while True:
            for mode, chunk in graph.stream(graph_input, config, context=run.options,
                                            stream_mode=["updates", "custom", "messages"]):
                if mode == "messages":
                    if (event := tokens.event(*chunk)) is not None:
                        reporter.live(event)
                    continue
                if mode == "custom":
                    reporter.live(chunk)
                    continue
                for node, update in chunk.items():
                    if isinstance(update, dict) and update:
                        reporter.update(node, update)
            state = graph.get_state(config)
            if not state.interrupts:
                break
            pending = state.interrupts[0]  # the plan's, or a tool call's (approve_tools); parallel calls: one by one
            request = pending.value
            reporter.approval_needed(run.id, request)
            decision, run.decision = run.decision, None  # used once: an invalid edit asks again
            decision = decision or (ask(request) if ask else None)
            if decision is None:
                run.store.set_status(run.id, "waiting")
                reporter.run_finished(run.id, "waiting")
                return "waiting"
            graph_input = Command(resume={pending.id: decision})  # by id: another call may wait beside it
        final = state.values.get("final")
        run.store.set_status(run.id, "done")
        reporter.run_finished(run.id, "done", final=final)
        return "done"


def _record_status(run: Run, status: str, error: str | None = None) -> None:
    """Best effort while handling another error: the database may be what failed (locked, full)."""
    try:
        run.store.set_status(run.id, status, error=error)
    except DatabaseError:
        pass  # the runs list shows the run as interrupted once this process is gone


def find_checkpoint(saver: Any, run_id: str, checkpoint_id: str) -> Any:
    tup = saver.get_tuple({"configurable": {"thread_id": run_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}})
    if tup is None:
        raise UsageError(f"run {run_id} has no checkpoint {checkpoint_id!r} (list them: hierplan show {run_id} --history)")
    return tup


def copy_checkpoint(saver: Any, tup: Any, run_id: str, checkpoint_id: str, new_run_id: str) -> None:
    """Put a checkpoint (with its pending writes) at the head of a new thread; the original is untouched."""
    metadata = {**tup.metadata, "source": "fork", "forked_from": f"{run_id}@{checkpoint_id}"}
    config = saver.put({"configurable": {"thread_id": new_run_id, "checkpoint_ns": ""}}, tup.checkpoint, metadata,
                       tup.checkpoint["channel_versions"])
    by_task: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    for task_id, channel, value in tup.pending_writes or []:
        by_task[task_id].append((channel, value))
    for task_id, writes in by_task.items():
        saver.put_writes(config, writes, task_id)
