"""An MCP server's tools as plan steps: the same run as

    hierplan run --mcp examples/mcp_servers.json "Which room is Ada Ferreira in, and what is her extension?"

from Python. Run it from the repository's root with the venv active (the servers file starts ``python
examples/mcp_server.py``, a path relative to where hierplan runs), with the ``mcp`` extra installed
(``pip install 'hierplan[mcp]'``):

    . .venv/bin/activate
    python examples/mcp_run.py                             # the embedded model

``load_tools`` is what ``--mcp FILE`` calls: it starts each server in the file, opens one session to it, lists
its tools within a time limit, and gives them back as LangChain tools that call them on that session; a bad file
or a server that does not answer is one UsageError. Closing them (the ``with`` block) ends the sessions and the
servers' processes, so nothing is left running after the run (nor after a killed hierplan: they get the
parent-death signal).
"""

from __future__ import annotations

from pathlib import Path

from hierplan import build_graph, load_chat_model
from hierplan.render.text import step_lines
from hierplan.tools.mcp import load_tools

SERVERS = Path(__file__).resolve().parent / "mcp_servers.json"
TASK = "Which room is Ada Ferreira in, and what is her phone extension? Look her up in the staff directory."


def main(model=None, servers: str | Path = SERVERS, task: str = TASK) -> dict:
    """Run ``task`` with the tools of the MCP servers in ``servers`` on ``model`` (default: the embedded model),
    print each step (a tool step with its call and result) and the answer; the run's final state is returned."""
    with load_tools(servers) as tools:  # before the model loads: a server that does not start fails fast
        print("tools:", ", ".join(t.name for t in tools))
        if model is None:
            model = load_chat_model()
        graph = build_graph(model, tools=tools)
        state = graph.invoke({"task": task}, {"configurable": {"thread_id": "mcp-directory"}})

    for result in state["results"]:  # an MCP tool step: the call the model wrote and its result
        print("\n".join(step_lines(result)))
    print("\nAnswer:", state["final"])
    return state


if __name__ == "__main__":
    main()
