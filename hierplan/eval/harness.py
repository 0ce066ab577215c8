"""Run the compiled graph over tasks, one thread_id per task (N at once with concurrency), and score each run."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterable

from hierplan.eval.metrics import task_metrics
from hierplan.eval.scoring import score, score_named, score_text
from hierplan.eval.tasks import EvalTask

ERROR_CHARS = 500

# on_result(record, position, total): called after each task (progress lines, incremental writes).
ResultCallback = Callable[[dict[str, Any], int, int], None]


def task_input(task: EvalTask) -> dict[str, Any]:
    """The graph's input for a task: its question, and its files when it has any (as ``hierplan run --file``)."""
    return {"task": task.question, **({"files": list(task.files)} if task.files else {})}


def evaluate_task(graph: Any, task: EvalTask, thread_id: str) -> dict[str, Any]:
    """Run one task to its end and return its record. A run that raises is recorded with ``error``
    (and the counts of whatever it finished before); it never raises, except KeyboardInterrupt."""
    config = {"configurable": {"thread_id": thread_id}}
    error = None
    start = time.perf_counter()
    try:
        state = graph.invoke(task_input(task), config, durability="sync")
    except Exception as exc:  # noqa: BLE001 - one task's failure must not end the evaluation
        error = f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
        state = _partial_state(graph, config)
    seconds = round(time.perf_counter() - start, 3)
    final = state.get("final") if error is None else None
    expected = task.expected_answer
    named: dict[str, Any] = {}
    if task.named:
        given, correct, right = score_named(final, task.named)
        predicted = "; ".join(f"@{n}[{v}]" for n, v in given.items()) or None
        named = {"sub_right": right, "sub_total": len(task.named)}
    else:
        predicted, correct = (score_text(final, task.expected_text) if task.expected_text is not None
                              else score(final, task.expected))
    if error is not None and expected is not None:
        correct = False  # a failed run did not answer; it counts against accuracy
    metrics = task_metrics(state)
    return {
        "index": task.index,
        "thread_id": thread_id,
        "question": task.question,
        "expected": expected,
        "predicted": predicted,
        "correct": correct,
        "final": final,
        **named,
        **metrics,
        **({"needs_tools": list(task.needs_tools),
            "needed_tools_called": set(task.needs_tools) <= {c["tool"] for c in metrics["tool_calls"]}}
           if task.needs_tools else {}),
        "seconds": seconds,
        "error": error,
    }


def _partial_state(graph: Any, config: dict[str, Any]) -> dict[str, Any]:
    try:
        return dict(graph.get_state(config).values or {})
    except Exception:  # noqa: BLE001 - no checkpoint to read is fine: nothing finished
        return {}


def run_eval(graph: Any, tasks: Iterable[EvalTask], *, thread_prefix: str = "eval",
             on_result: ResultCallback | None = None, concurrency: int = 1) -> list[dict[str, Any]]:
    """Evaluate every task with the same graph (so the model is loaded once); one thread_id per task.

    ``concurrency``: how many tasks run at once (a bounded thread pool; they share the model). ``on_result``
    is called in this thread as each task finishes, so with concurrency > 1 in finishing order; the
    returned records are in task order.
    """
    tasks = list(tasks)
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if concurrency == 1:  # in this thread: Ctrl-C stops the running task at once
        finished = (evaluate_task(graph, t, f"{thread_prefix}-{t.index}") for t in tasks)
        return _collect(finished, len(tasks), on_result)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=thread_prefix) as pool:
        futures = [pool.submit(evaluate_task, graph, t, f"{thread_prefix}-{t.index}") for t in tasks]
        try:
            records = _collect((f.result() for f in as_completed(futures)), len(tasks), on_result)
        except BaseException:  # Ctrl-C: no new task starts; leaving the pool waits for the running ones
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    order = {t.index: i for i, t in enumerate(tasks)}
    return sorted(records, key=lambda r: order[r["index"]])


def _collect(records: Iterable[dict[str, Any]], total: int, on_result: ResultCallback | None) -> list[dict[str, Any]]:
    done = []
    for position, record in enumerate(records, start=1):
        done.append(record)
        if on_result is not None:
            on_result(record, position, total)
    return done


def progress_line(record: dict[str, Any], position: int, total: int) -> str:
    """'[3/8] correct (42 = 42) 73.4s' / 'wrong (41, expected 42)' / 'error: ...' / 'no answer to check'; a run with
    tool steps or files also says how many tool calls it made (of its tool steps) and files it had."""
    if record.get("error"):
        verdict = f"error: {record['error'][:120]}"
    elif record.get("correct") is None:
        verdict = f"no answer to check (predicted {record.get('predicted')})"
    elif record["correct"]:
        verdict = f"correct ({record.get('predicted')} = {record.get('expected')})"
    else:
        verdict = f"wrong ({record.get('predicted')}, expected {record.get('expected')})"
    tools = (f" tool_calls={len(record.get('tool_calls') or [])}/{record.get('tool_steps')}"
             f" files={len(record.get('files') or [])}" if record.get("tool_steps") or record.get("files") else "")
    return (f"[{position}/{total}] {verdict} plan={record.get('plan_source')} steps={record.get('steps')} "
            f"python_ok={record.get('python_ok')}/{record.get('python_steps')}{tools} {record['seconds']:.1f}s")
