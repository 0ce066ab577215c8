"""Start and stop a real `hierplan serve` (LangGraph Server's `langgraph dev`) for tests and the bench.

The server runs tests/server_graph.py's factory (hierplan's graph over a scripted fast model) on a free
127.0.0.1 port, from its own work directory, and is killed at the end whatever happens.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from servers.launch import wait_ready
from pg_cluster import free_port  # one copy of it for every test server (stdlib only, no Postgres needed)

REPO = Path(__file__).resolve().parent.parent
TEST_GRAPH = f"{Path(__file__).resolve().parent / 'server_graph.py'}:make_graph"
READY_TIMEOUT_S = 90
STOP_TIMEOUT_S = 30


def missing() -> str | None:
    """Why no server can start here, or None."""
    import importlib.util

    for module, package in (("langgraph_cli", "langgraph-cli[inmem]"), ("langgraph_api", "langgraph-api"),
                            ("langgraph_sdk", "langgraph-sdk")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install 'hierplan[server]')"
    return None


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    workdir: Path
    log: Path

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Stop the server (SIGTERM: a clean shutdown; SIGKILL: a crash) and wait for it."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=STOP_TIMEOUT_S)


def start_server(workdir: Path, *, db: str | None = None, args: tuple[str, ...] = (), port: int | None = None,
                 graph: str = TEST_GRAPH, model: str | None = "scripted", jobs: int = 4,
                 env: dict[str, str] | None = None) -> Server:
    """Run `hierplan serve` as a subprocess and wait until it answers /ok."""
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "hierplan.cli.main", "serve", "--port", str(port), "--workdir", str(workdir),
            "--n-jobs", str(jobs), "--graph", graph, *(["--model", model] if model else []),
            *(["--db", db] if db else []), *args]
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                "HIERPLAN_STATE_DIR": str(workdir / "state"), **(env or {})}
    log = workdir / f"server-{port}.log"
    with open(log, "ab") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=full_env,
                                   start_new_session=True)
    server = Server(process, f"http://127.0.0.1:{port}", workdir, log)
    try:
        wait_ready(process, f"{server.url}/ok", READY_TIMEOUT_S, "hierplan serve", server.log_tail)
    except RuntimeError:
        server.stop(signal.SIGKILL)
        raise
    return server
