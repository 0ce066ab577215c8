"""Start LangGraph Server's local dev server (``langgraph dev``) on hierplan: the config it reads, its argv and
environment. ``hierplan serve`` (hierplan/cli/serve_cmd.py) is the command; this module holds no CLI parsing."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hierplan.errors import HierplanError, UsageError
from hierplan.server.checkpointer import DB_ENV
from hierplan.server.factory import DEFAULTS_ENV
from hierplan.store import is_postgres

GRAPH_ID = "hierplan"
FACTORY = "hierplan.server:make_graph"
CHECKPOINTER = "hierplan.server.checkpointer.postgres_checkpointer"
# LangSmith's switches, the current name first (langsmith and langgraph-api read each).
LANGSMITH_TRACING_VARS = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")
# Concurrent runs per server (langgraph dev's own default is 1 job at a time for the in-memory runtime).
DEFAULT_JOBS = 8


class MissingExtra(HierplanError):
    """An optional dependency group is not installed."""


@dataclass
class ServeSpec:
    """What ``hierplan serve`` starts: where, how many concurrent runs, which database, default options."""

    workdir: Path
    host: str = "127.0.0.1"
    port: int = 2024
    jobs: int = DEFAULT_JOBS
    db: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    graph: str = FACTORY


def require_server_extra() -> None:
    if importlib.util.find_spec("langgraph_cli") is None or importlib.util.find_spec("langgraph_api") is None:
        raise MissingExtra("hierplan serve needs LangGraph Server: pip install 'hierplan[server]'")


def langgraph_config(spec: ServeSpec) -> dict[str, Any]:
    """langgraph.json for this server. The database URL is not in it (it travels in the environment)."""
    config: dict[str, Any] = {"dependencies": ["."], "graphs": {GRAPH_ID: spec.graph}}
    if spec.db:
        config["checkpointer"] = {"path": CHECKPOINTER}
    return config


def command(spec: ServeSpec, config_path: Path) -> list[str]:
    # No reload (a code change must not restart running jobs); --allow-blocking because the factory loads the
    # model (file reads) on the server's event loop the first time, which langgraph dev otherwise refuses.
    return [sys.executable, "-m", "langgraph_cli", "dev", "--config", str(config_path), "--host", spec.host,
            "--port", str(spec.port), "--n-jobs-per-worker", str(spec.jobs), "--no-browser", "--no-reload",
            "--allow-blocking"]


def environment(spec: ServeSpec, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["LANGGRAPH_CLI_NO_ANALYTICS"] = "1"
    # LangSmith traces when its variables say so (LANGSMITH_TRACING=true, or the older names), to LANGSMITH_ENDPOINT
    # under LANGSMITH_PROJECT, as everywhere else; langgraph-api would also trace whenever a LangSmith key is in
    # the environment, sending the users' tasks out unasked: said nothing, it is off.
    if not any(env.get(name) for name in LANGSMITH_TRACING_VARS):
        env["LANGSMITH_TRACING"] = "false"
    env[DEFAULTS_ENV] = json.dumps(spec.defaults)
    if spec.db:
        env[DB_ENV] = spec.db
    else:
        env.pop(DB_ENV, None)
    return env


def prepare(spec: ServeSpec) -> tuple[list[str], dict[str, str]]:
    """Check the set-up, write langgraph.json into the work directory, return (argv, env)."""
    require_server_extra()
    if spec.db and not is_postgres(spec.db):
        raise UsageError(f"serve --db takes a postgresql:// URL (got {spec.db!r}); without --db the server keeps "
                         "threads in its own store in the state directory")
    if spec.jobs < 1:
        raise UsageError(f"--n-jobs must be at least 1 (got {spec.jobs})")
    check_port_free(spec.host, spec.port)
    if spec.db:
        check_postgres(spec.db)
    spec.workdir.mkdir(parents=True, exist_ok=True)
    config_path = spec.workdir / "langgraph.json"
    config_path.write_text(json.dumps(langgraph_config(spec), indent=2) + "\n")
    return command(spec, config_path), environment(spec)


def check_port_free(host: str, port: int) -> None:
    """langgraph dev silently moves to another port when the one asked for is taken; clients would then talk to
    whatever holds it. Refuse instead (a race with another process remains, and is the user's to see)."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        try:
            s.bind((host, port))
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port") from None


def check_postgres(url: str) -> None:
    """Connect once, so a wrong URL or password is one line here rather than a traceback in the server log."""
    try:
        import psycopg

        from hierplan.store import postgres  # its redaction: no password in the message
    except ImportError as exc:
        raise MissingExtra(f"a postgresql:// --db needs {exc.name}: pip install 'hierplan[server]'") from exc
    try:
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.Error as exc:
        raise UsageError(f"cannot connect to {postgres.display_name(url)}: {postgres.redact(exc, url)}") from None


def exec_server(argv: list[str], env: dict[str, str], workdir: Path) -> None:
    """Replace this process with the server, so signals (Ctrl-C, kill) reach it directly."""
    os.chdir(workdir)  # langgraph dev keeps its in-memory store in ./.langgraph_api
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], argv, env)
