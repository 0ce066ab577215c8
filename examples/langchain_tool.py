"""Your own LangChain tool as a plan step: facts the model cannot know, looked up while the plan runs.

    .venv/bin/python examples/langchain_tool.py            # the embedded model

Any LangChain tool works (a ``BaseTool``, or a function decorated with ``@tool``): pass it to
``build_graph(model, tools=[...])``. The planner is shown each tool's name and its docstring, and a plan step's
``tool`` may then name it. The ``tool_step`` node has the model write the call's arguments as JSON (checked
against the function's signature), calls the tool with a time limit and records the call on the step's result:
``tool_args``, ``tool_result``, and its text as ``output``, which later steps and the answer read.
"""

from __future__ import annotations

from langchain_core.tools import tool

from hierplan import build_graph, load_chat_model
from hierplan.render.text import plan_lines, step_lines

# A tiny in-memory inventory: stock per warehouse and the price of one unit, in euros.
INVENTORY = {
    "blue widget": {"lisbon": 140, "porto": 65, "unit_price_eur": 2.75},
    "red gadget": {"lisbon": 12, "porto": 30, "unit_price_eur": 19.90},
    "green gizmo": {"lisbon": 0, "porto": 8, "unit_price_eur": 112.00},
}


@tool
def inventory(item: str) -> dict:
    """Look up an item of our inventory (blue widget, red gadget, green gizmo): the units in stock in each
    warehouse (lisbon, porto) and the price of one unit in euros."""
    # The docstring is what the planner reads: say what the tool knows and which arguments it takes.
    try:
        return {"item": item, **INVENTORY[item.strip().lower()]}
    except KeyError:
        # An exception is a failed step (ok: false, error); the replanner may try another plan.
        raise ValueError(f"no item {item!r} in the inventory; known items: {', '.join(INVENTORY)}") from None


TASK = ("What is our stock of blue widgets worth in euros, both warehouses together? "
        "Look the item up in the inventory, then compute the value with Python.")


def main(model=None, task: str = TASK) -> dict:
    """Run ``task`` with the inventory tool on ``model`` (default: the embedded model), print each step (a tool
    step with its call and result) and the answer; the run's final state is returned."""
    if model is None:
        model = load_chat_model()
    graph = build_graph(model, tools=[inventory])
    state = graph.invoke({"task": task}, {"configurable": {"thread_id": "inventory"}})

    print("plan:", *plan_lines(state["plan"]), sep="\n")
    for result in state["results"]:  # a tool step: the call the model wrote and what came back
        print("\n".join(step_lines(result)))
    print("\nAnswer:", state["final"])
    return state


if __name__ == "__main__":
    main()
