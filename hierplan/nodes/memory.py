"""The memory node, a run's first: long-term memory through the graph's LangGraph store (``BaseStore``), and the
note every later prompt shows before the task (a thread's earlier turns, the user's memories).

What a task asks to be remembered is read by a rule (rules.conversation.remember_request: "Remember that my team
is Blue." keeps "my team is Blue"), never by the model, and put in the store under ("memories", USER), its key
the fact's own (rules.conversation.memory_key), so a node run again after a kill writes the same item. Then every
memory of the user, newest first, is read back: a later run of any thread, in this process or after a restart
(a SQLite or Postgres store: hierplan.store.open_memory_store), sees them.
"""

from __future__ import annotations

from langgraph.config import get_config
from langgraph.runtime import Runtime

from hierplan.config import DEFAULT_MEMORY_USER, MEMORIES_SHOWN
from hierplan.graph.state import AgentState, MemoryDict
from hierplan.nodes.context import conversation_note
from hierplan.nodes.events import emit
from hierplan.options import RunOptions, run_options
from hierplan.rules.conversation import memory_key, remember_request

MEMORY_NAMESPACE = "memories"


def memory_namespace(user: str | None) -> tuple[str, str]:
    """Where a user's memories are kept in the store."""
    return (MEMORY_NAMESPACE, user or DEFAULT_MEMORY_USER)


def memory(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
    """Stores what the task asks to remember, recalls the user's memories, and writes the note the prompts show
    (nodes.context.conversation_note). A graph without a store remembers nothing; its note holds the earlier
    turns alone."""
    store = runtime.store
    namespace = memory_namespace(run_options(runtime.context).user)
    update: AgentState = {}
    fact = remember_request(state["task"])
    if fact is not None and store is not None:
        run_id = (get_config().get("configurable") or {}).get("thread_id")
        item = {"text": fact, **({"run_id": str(run_id)} if run_id else {})}
        store.put(namespace, memory_key(fact), item)
        update["remembered"] = MemoryDict(key=memory_key(fact), **item)
    memories: list[MemoryDict] = []
    if store is not None:
        items = sorted(store.search(namespace, limit=MEMORIES_SHOWN), key=lambda i: i.updated_at, reverse=True)
        memories = [MemoryDict(key=i.key, text=str(i.value.get("text", "")),
                               **({"run_id": i.value["run_id"]} if i.value.get("run_id") else {}))
                    for i in items if i.value.get("text")]
    turns = len(state.get("history") or [])
    if memories or turns:  # a run with neither says nothing
        emit("memory", recalled=len(memories), remembered=fact if "remembered" in update else None, turns=turns)
    return {**update, "memories": memories,
            "conversation": conversation_note(state.get("history") or [], memories)}
