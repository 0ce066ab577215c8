"""`hierplan serve`: the agent on LangGraph Server (``langgraph dev``), for the LangGraph SDK, RemoteGraph and
LangGraph Studio. Needs the ``server`` extra; hierplan/server/ holds the factory and the launch details."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from hierplan.config import state_dir

DEFAULT_PORT = 2024


def add_parser(sub, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve", parents=[common], help="serve the agent over LangGraph Server's API (langgraph dev)",
        description="Serve the agent as graph 'hierplan' on LangGraph Server's local runtime. Without a "
                    "postgresql:// --db, threads live in memory and are saved to the state directory every "
                    "~10 s and on a clean stop (docs/server.md says what survives a restart).")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--n-jobs", type=int, default=None, metavar="N",
                   help="runs executed at once (default 8)")
    p.add_argument("--workdir", type=Path, help="where the server keeps langgraph.json and its in-memory store "
                                                "(default: server/ in the state directory)")
    p.add_argument("--graph", metavar="MODULE:FACTORY", help="serve another factory instead of "
                   "hierplan.server:make_graph, e.g. one that calls hierplan.server.factory.graph_for with its "
                   "own model loader (a file path also works: ./my_graph.py:make_graph)")
    # Defaults for every run (the options `run` takes); an assistant's or a run's context or configurable
    # overrides them. With --approve every run stops after planning until resumed with Command(resume=...).
    from hierplan.app.fields import add_arguments

    add_arguments(p)
    p.set_defaults(func=cmd_serve)
    return p


def server_defaults(args: argparse.Namespace) -> dict:
    """The options given on the command line, by name (those left off are no defaults). An MCP servers' file is
    checked now (one error line, before the server starts) and passed as an absolute path: the server runs from
    its work directory."""
    from hierplan.app.fields import from_args

    given = from_args(args)
    if given.get("mcp"):
        from hierplan.tools.mcp import read_config

        given["mcp"] = str(Path(given["mcp"]).expanduser().resolve())
        read_config(given["mcp"])
    return given


def cmd_serve(args: argparse.Namespace) -> int:
    from hierplan.server.launch import DEFAULT_JOBS, FACTORY, ServeSpec, exec_server, prepare
    from hierplan.store import display_name, is_postgres

    db = args.db or (os.environ.get("HIERPLAN_DB") if is_postgres(os.environ.get("HIERPLAN_DB")) else None)
    spec = ServeSpec(workdir=args.workdir or state_dir() / "server", host=args.host, port=args.port,
                     jobs=args.n_jobs or DEFAULT_JOBS, db=db, defaults=server_defaults(args),
                     graph=_absolute(args.graph) if args.graph else FACTORY)
    argv, env = prepare(spec)
    where = f"Postgres {display_name(db)}" if db else f"memory, saved to {spec.workdir / '.langgraph_api'}"
    print(f"hierplan serve: graph 'hierplan' on http://{spec.host}:{spec.port} ({spec.jobs} runs at once; "
          f"threads in {where})", file=sys.stderr)
    exec_server(argv, env, spec.workdir)
    return 0  # not reached: the server replaced this process


def _absolute(graph: str) -> str:
    """A file path is made absolute: the server runs from its work directory."""
    path, _, name = graph.rpartition(":")
    return f"{Path(path).resolve()}:{name}" if "/" in path or path.endswith(".py") else graph
