"""Threads: a conversation as a sequence of runs. Each turn (``hierplan run --thread T TASK``, the page's thread
field, or ``RunService.start(..., thread=T)``) is a run of its own, planned and checkpointed like any other; its
input carries ``history``, the earlier turns' tasks, final answers, files and artifacts (records: their bytes stay
in the file store by sha256), which the memory node notes for every prompt (nodes.context.conversation_note).

The runs table keeps each turn's thread and number (store.runs.THREAD_KEY, TURN_KEY). A thread's first turn is
the run named T; a run started on its own may be continued as a thread by its id (it is then turn 1). Turn N
(N > 1) is the run ``T-N`` unless the caller names it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from hierplan.errors import UsageError
from hierplan.records import FileDict, TurnDict
from hierplan.store import RunStore, check_run_id, open_checkpointer, read_checkpoint
from hierplan.store.runs import RunRecord


def turn_of(record: RunRecord) -> int:
    """A run's turn in its thread (a run started on its own and continued as a thread is turn 1)."""
    return record.turn or 1


def thread_turns(store: RunStore, thread: str) -> list[RunRecord]:
    """The thread's runs, first turn first; a run of that id started on its own is its one turn; [] for a new
    thread."""
    check_run_id(thread)
    runs = store.list()
    turns = [r for r in runs if r.thread == thread]
    if not turns:
        turns = [r for r in runs if r.id == thread and r.thread is None]
    return sorted(turns, key=turn_of)


def turn_record(values: Mapping[str, Any], run_id: str, turn: int) -> TurnDict:
    """What a later turn keeps of a finished run: from its final state values (``graph.invoke``'s result, or its
    last checkpoint), its task, its final answer, and the records of its files and of what its steps saved."""
    record = TurnDict(turn=turn, run_id=run_id, task=values.get("task") or "", final=values.get("final") or "")
    if values.get("files"):
        record["files"] = list(values["files"])
    artifacts = [a for r in values.get("results") or [] for a in r.get("artifacts") or []]
    if artifacts:
        record["artifacts"] = [{k: a[k] for k in ("name", "size", "sha256", "media_type") if k in a}
                               for a in artifacts if "sha256" in a]
    return record


def thread_history(db: str, turns: Sequence[RunRecord]) -> list[TurnDict]:
    """The earlier turns as a new turn's input carries them, each read from its run's last checkpoint."""
    saver = open_checkpointer(db)
    return [turn_record(read_checkpoint(saver, r.id, db), r.id, turn_of(r)) for r in turns]


def next_turn(store: RunStore, thread: str) -> tuple[int, list[RunRecord]]:
    """(the new turn's number, the thread's earlier turns); a thread whose last turn has not ended with its
    answer (running, waiting, interrupted, failed) takes no new turn until it has: one line saying so."""
    turns = thread_turns(store, thread)
    if turns and turns[-1].status != "done":
        last = turns[-1]
        raise UsageError(f"thread {thread}: turn {turn_of(last)} (run {last.id}) is {last.status}; a new turn "
                         f"follows a finished one (continue it with: hierplan resume {last.id})")
    return (turn_of(turns[-1]) + 1 if turns else 1), turns


def turn_run_id(thread: str, turn: int) -> str:
    """The run id of a thread's turn, unless the caller names one: the thread's id for its first turn, then T-N."""
    return check_run_id(thread if turn == 1 else f"{thread}-{turn}")


def carried_files(history: Sequence[TurnDict], own: Sequence[FileDict], store: Any) -> list[FileDict]:
    """The new turn's files: its own, then the earlier turns' files and what their steps saved (newest first, so a
    later turn's file wins a name), each under its own name (an artifact by its last path part) at ./data/NAME.
    No bytes are copied: the records name the file store's copies by sha256."""
    files = list(own)
    names = {f["name"] for f in files}
    for turn in reversed(history):
        for f in turn.get("files") or []:
            if f["name"] not in names:
                files.append(f)
                names.add(f["name"])
        for a in turn.get("artifacts") or []:
            name = a["name"].rsplit("/", 1)[-1]
            if name not in names:
                files.append(_artifact_file(a, name, store))
                names.add(name)
    return files


def _artifact_file(artifact: Mapping[str, Any], name: str, store: Any) -> FileDict:
    from hierplan.tools.files import local_path
    from hierplan.tools.previews import preview_path

    path = local_path(artifact, store)  # checked against its sha256: a file gone is one line naming it
    return FileDict(name=name, size=artifact["size"], sha256=artifact["sha256"], media_type=artifact["media_type"],
                    preview=preview_path(name, path))
