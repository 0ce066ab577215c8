"""``hierplan eval --ray``: the evaluation spread over a Ray cluster, one task at a time per actor.

A fixed pool of actors, each building its graph (model and checkpointer) once. Every task runs in its own
thread (``<prefix>-<index>``) checkpointed in the shared run database, so when an actor dies mid-task Ray
restarts it (``max_restarts``) and replays the call (``max_task_retries``) in the new process, which
continues the thread from its last checkpoint instead of starting it again. The driver writes each record
as its task finishes; a task is recorded once whatever happened to its actors.

Ray is an optional extra (``pip install 'hierplan[ray]'``): importing this module does not import it.
"""

from __future__ import annotations

import importlib
import os
import socket
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable

from hierplan.errors import HierplanError, UsageError
from hierplan.eval.harness import ResultCallback, evaluate_task
from hierplan.eval.metrics import task_metrics
from hierplan.eval.tasks import EvalTask

ACTOR_CPUS = 1
"""CPUs Ray reserves for each actor (it also sets the actor's OMP_NUM_THREADS to this)."""
MAX_ACTOR_RESTARTS = 3
"""How often Ray brings a dead actor back (a new process that builds its model again)."""
MAX_TASK_RETRIES = 2
"""How often Ray replays a task whose actor died under it; a task that kills its actor more often than
this is recorded as failed instead of taking the pool down."""
INSTALL_HINT = "pip install 'hierplan[ray]'"
MODEL_FACTORY_ENV = "HIERPLAN_MODEL_FACTORY"
"""``module:function`` the actors build their model with when no model_factory is passed (e.g. a chat
model for a remote server, or a scripted one in tests); unset: hierplan's own loader."""


def require_ray():
    """The ``ray`` module, or one clear line saying how to get it."""
    try:
        import ray
    except ImportError as exc:
        raise HierplanError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from exc
    return ray


def add_ray_options(p) -> None:
    """``--ray [ADDRESS]`` and ``--actors N`` for ``hierplan eval`` (argparse only; Ray is not imported)."""
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="spread the tasks over a Ray cluster: 'auto' (the cluster `ray start` started here), "
                        "host:port or ray://host:port; no ADDRESS: $RAY_ADDRESS, a running local cluster, "
                        "or a new one. Needs --db (postgresql://... when the actors are on several machines)")
    p.add_argument("--actors", type=int, metavar="N",
                   help="with --ray: actors in the pool, each loading the model once (default: one per "
                        "cluster CPU, or per GPU with --device cuda; at most one per task)")


def load_factory(path: str) -> Callable[[dict[str, Any]], Any]:
    """``"package.module:function"`` -> the function (it gets the options and returns a chat model)."""
    module, _, name = path.partition(":")
    if not module or not name:
        raise UsageError(f"model factory {path!r}: write it as 'package.module:function'")
    return getattr(importlib.import_module(module), name)


def build_actor_graph(options: dict[str, Any], db: str, model_factory: str | None = None) -> Any:
    """The graph one actor runs every task with: its model built once (``base_url``: a model server every
    actor shares, instead of one model per actor), checkpoints in ``db``. ``options``: RunOptions as a dict,
    and whatever else ``model_factory`` reads."""
    from hierplan.app.agent import load_models
    from hierplan.graph.builder import build_graph
    from hierplan.options import RunOptions
    from hierplan.store import open_checkpointer, open_file_store

    run_options = RunOptions.from_dict(options)
    model = load_factory(model_factory)(options) if model_factory else load_models(run_options)
    # the tasks' files: the driver put them in the database's store (eval.command), where every actor reads them
    return build_graph(model, open_checkpointer(db), options=run_options, file_store=open_file_store(db))


class ResumingGraph:
    """What ``evaluate_task`` runs on an actor. It always starts a task from its input; on a thread that
    already has checkpoints (the same task, replayed after its actor died) this calls ``invoke(None)``
    instead, which continues from the last checkpoint (and returns a finished thread's values as they are)."""

    def __init__(self, graph: Any):
        self.graph = graph
        self.resumed = False

    def invoke(self, task_input: Any, config: dict[str, Any], **kwargs: Any) -> Any:
        snapshot = self.graph.get_state(config)
        self.resumed = bool(snapshot.values)
        return self.graph.invoke(None if snapshot.values else task_input, config, **kwargs)

    def get_state(self, config: dict[str, Any]) -> Any:
        return self.graph.get_state(config)


class EvalWorker:
    """The body of one Ray actor (wrapped by ``ray.remote`` in ``make_actor_class``)."""

    def __init__(self, options: dict[str, Any], db: str, model_factory: str | None = None):
        self.where = {"host": socket.gethostname(), "pid": os.getpid()}
        self.error: HierplanError | None = None
        try:
            self.graph = build_actor_graph(options, db, model_factory)
        except HierplanError as exc:  # kept for ready(): the driver shows it as the user error it is
            self.error = exc

    def ready(self) -> HierplanError | None:
        return self.error

    def run(self, task: EvalTask, thread_id: str) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        graph = ResumingGraph(self.graph)
        record = evaluate_task(graph, task, thread_id)
        return {**record, "resumed": graph.resumed, "worker": self.where}


def make_actor_class(ray):
    return ray.remote(num_cpus=ACTOR_CPUS, max_restarts=MAX_ACTOR_RESTARTS,
                      max_task_retries=MAX_TASK_RETRIES)(EvalWorker)


def failed_record(task: EvalTask, thread_id: str, error: str) -> dict[str, Any]:
    """The record of a task Ray gave up on (its actor died too often); same keys as evaluate_task's."""
    return {"index": task.index, "thread_id": thread_id, "question": task.question,
            "expected": task.expected_answer, "predicted": None,
            "correct": False if task.expected_answer is not None else None, "final": None,
            **task_metrics({}), "seconds": 0.0, "error": error[:500], "resumed": None, "worker": None}


def check_ray_args(address: str | None, actors: int | None, db: str | None) -> None:
    """For the CLI, before it writes anything: --actors goes with --ray; with --ray, Ray is importable and
    the database can be shared. ``address`` None: no --ray."""
    if address is None:
        if actors is not None:
            raise UsageError("--actors goes with --ray (without it the tasks run in this process; "
                             "--concurrency N runs N at once)")
        return
    shared_db(db)  # a usage error first: it holds whether or not Ray is installed
    require_ray()


def shared_db(db: str | None) -> str:
    """The run database every actor opens. A relative file path is made absolute (actors run elsewhere)."""
    if not db or db == ":memory:":
        raise UsageError("--ray needs --db: a run database every actor can reach (a SQLite file on one "
                         "machine, postgresql://... for several), so a task resumes where its actor died")
    if "://" in db:
        return db
    return str(Path(db).expanduser().resolve())


def run_eval_on_ray(tasks: Iterable[EvalTask], options: dict[str, Any] | None = None, *, db: str,
                    address: str | None = None, actors: int | None = None, model_factory: str | None = None,
                    thread_prefix: str | None = None, on_result: ResultCallback | None = None,
                    runtime_env: dict[str, Any] | None = None,
                    log: Callable[[str], None] = lambda line: None) -> list[dict[str, Any]]:
    """Evaluate ``tasks`` on a Ray cluster; returns the records in the order the tasks finished.

    ``db``: the run database every actor opens (a SQLite file on one machine, ``postgresql://`` for
    several). ``address``: as ``ray.init`` takes it (None: $RAY_ADDRESS, the cluster ``ray start`` started
    here, or a new local one); a Ray already initialised in this process is used as it is, with
    ``runtime_env``. ``actors``: default one per cluster CPU, at most one per task. ``model_factory``:
    "module:function" importable on every node, called with ``options`` on each actor, returning a chat
    model (default: $HIERPLAN_MODEL_FACTORY, else hierplan's loader with ``options["model"]``).
    ``thread_prefix``: task N runs in thread ``<prefix>-N``; the same prefix on the same database continues
    the threads already there. ``on_result(record, position, total)`` runs in this process as tasks finish.
    """
    ray = require_ray()
    tasks, options, db = list(tasks), dict(options or {}), shared_db(db)
    model_factory = model_factory or os.environ.get(MODEL_FACTORY_ENV) or None
    prefix = thread_prefix or f"eval-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"  # a new thread per task
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address or None, runtime_env=runtime_env, log_to_driver=False)
    pool: list = []
    try:
        start_actors(ray, pool, options, db, model_factory, actors, len(tasks), log)
        return drive(ray, pool, tasks, prefix, on_result)
    finally:
        for actor in pool:  # now, not when the handles are collected: the cluster may be shared
            ray.kill(actor, no_restart=True)
        if started_here:
            ray.shutdown()


def pool_size(resources: dict[str, float], options: dict[str, Any], actors: int | None,
              n_tasks: int) -> tuple[int, int]:
    """(actors to start, GPUs each reserves) on a cluster with these total ``resources``. With
    ``device: cuda`` every actor reserves a GPU: Ray hides the GPUs from an actor that reserved none."""
    gpus = 1 if options.get("device") == "cuda" else 0
    cpus = int(resources.get("CPU", 0))
    most, room = cpus // ACTOR_CPUS, f"{cpus} CPUs"
    if gpus:
        most, room = min(most, int(resources.get("GPU", 0))), f"{cpus} CPUs and {int(resources.get('GPU', 0))} GPUs"
    if most < 1 or (actors is not None and not 1 <= actors <= most):
        asked = f"--actors {actors}" if actors is not None else "--ray"
        raise UsageError(f"{asked}: the Ray cluster has {room}, room for {most} actors "
                         f"({ACTOR_CPUS} CPU{' and 1 GPU' if gpus else ''} each)")
    return max(min(actors or most, n_tasks), 1), gpus


def start_actors(ray, pool: list, options, db, model_factory, actors, n_tasks, log) -> None:
    """Fill ``pool`` with ready actors (the caller's list, so the caller can stop them if this fails)."""
    count, gpus = pool_size(ray.cluster_resources(), options, actors, n_tasks)
    log(f"starting {count} Ray actors (each loads the model once)")
    worker = make_actor_class(ray).options(num_gpus=gpus)
    pool.extend(worker.remote(options, db, model_factory) for _ in range(count))
    try:  # a model that cannot load fails here once, with its own message, not once per task
        errors = ray.get([a.ready.remote() for a in pool])
    except ray.exceptions.RayActorError as exc:  # a bug in __init__: the traceback ends with the error
        last = [line for line in str(exc).splitlines() if line.strip()][-1].strip()
        raise HierplanError(f"a Ray actor could not start: {last}") from exc
    for error in errors:
        if error is not None:
            raise error


def drive(ray, pool: list, tasks: list[EvalTask], prefix: str,
          on_result: ResultCallback | None) -> list[dict[str, Any]]:
    """Hand each idle actor the next task; record each task once, as it finishes.

    Written here rather than with ray.util.ActorPool: its get_next_unordered() raises an actor's death
    without saying which task that actor was running, and every task must end up in the results exactly
    once. Retrying a task whose actor died is Ray's job (max_restarts, max_task_retries); what reaches this
    loop as an error is a task Ray gave up on, or an actor that is gone for good.
    """
    pending, idle = deque(tasks), list(pool)
    running: dict[Any, tuple[EvalTask, Any]] = {}
    records: list[dict[str, Any]] = []

    def record(rec: dict[str, Any]) -> None:
        records.append(rec)
        if on_result is not None:
            on_result(rec, len(records), len(tasks))

    while pending or running:
        while idle and pending:
            actor, task = idle.pop(0), pending.popleft()
            running[actor.run.remote(task, f"{prefix}-{task.index}")] = (task, actor)
        if not running:  # every actor is gone: the rest cannot run
            for task in pending:
                record(failed_record(task, f"{prefix}-{task.index}", "no Ray actor left to run it"))
            break
        [done], _ = ray.wait(list(running), num_returns=1)
        task, actor = running.pop(done)
        try:
            rec = ray.get(done)
        except ray.exceptions.RayActorError as exc:
            rec = failed_record(task, f"{prefix}-{task.index}",
                                f"its Ray actor died {MAX_TASK_RETRIES + 1} times: {' '.join(str(exc).split())}")
            if not isinstance(exc, ray.exceptions.ActorDiedError):
                idle.append(actor)  # unavailable for a moment, not dead: keep it
        else:
            idle.append(actor)
        record(rec)
    return records
