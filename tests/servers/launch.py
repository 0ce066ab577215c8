"""Start a real OpenAI-compatible server for a test: 127.0.0.1, a free port, a temp dir, stopped afterwards.

Servers: ``transformers serve`` (transformers[serving], in the venv) on the embedded model converted to an HF
folder, and llama.cpp's server (llama-cpp-python[server], built once by ``make test-servers`` into its own venv)
on the embedded GGUF itself. A server lives at most SERVER_LIFETIME_S and dies with the test process.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

READY_TIMEOUT_S = 180  # a cold start on 2 busy cores; about 5 s on an idle machine
SERVER_LIFETIME_S = 1800
LLAMA_VENV_ENV = "HIERPLAN_LLAMA_VENV"
DEFAULT_LLAMA_VENV = Path.home() / ".cache" / "hierplan" / "llama-venv"


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    model: str
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """The whole process group (``timeout`` and the server under it); SIGKILL if SIGTERM is not enough (a
        server busy in native code may not stop)."""
        if self.process.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=15)
                return
            except subprocess.TimeoutExpired:
                continue


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child before exec
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def start(command: list[str], *, port: int, model: str, workdir: Path, ready_path: str,
          env: dict[str, str] | None = None) -> Server:
    """Run ``command`` (which must listen on 127.0.0.1:port) in ``workdir``; return once GET ready_path is 200."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"server-{port}.log"
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
    with log.open("wb") as out:
        process = subprocess.Popen(["timeout", str(SERVER_LIFETIME_S), *command], cwd=workdir, env=full_env,
                                   stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, preexec_fn=_die_with_parent)
    server = Server(process, port, model, log)
    try:
        wait_ready(process, f"http://127.0.0.1:{port}{ready_path}", READY_TIMEOUT_S, command[0], server.log_tail)
    except RuntimeError:
        server.stop()
        raise
    return server


def wait_ready(process: subprocess.Popen, url: str, timeout_s: float, name: str,
               log_tail: Callable[[], str]) -> None:
    """Return once GET ``url`` answers 200 (or 401: up, and asking for the key it was started with); raise
    RuntimeError with the server's log when ``process`` exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited ({process.returncode}) before answering:\n{log_tail()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except urllib.error.HTTPError as answer:
            if answer.code == 401:
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"{name} did not answer within {timeout_s} s:\n{log_tail()}")


# ---------------------------------------------------------------- transformers serve


def transformers_serve_missing() -> str | None:
    """Why ``transformers serve`` cannot run here, or None."""
    for module in ("fastapi", "uvicorn", "transformers.cli.serve"):
        if importlib.util.find_spec(module) is None:
            return f"transformers serve is not installed ({module} missing): pip install 'hierplan[serving]'"
    return None


def embedded_model_folder(cache_dir: Path) -> Path:
    """The embedded GGUF converted into ``cache_dir`` (hierplan's model cache layout: an HF model folder)."""
    from hierplan.models import gguf_cache
    from hierplan.models.device import cpu_dtype_name
    from hierplan.models.loader import _load_gguf  # the loader's own weight load (the test guard's hook)
    from hierplan.models.resolve import embedded_gguf

    saved = os.environ.get("HIERPLAN_CACHE_DIR")
    os.environ["HIERPLAN_CACHE_DIR"] = str(cache_dir)
    try:
        gguf = embedded_gguf()
        folder, ready = gguf_cache.cached_folder(gguf, cpu_dtype_name())
        if not ready:
            gguf_cache.convert(gguf, cpu_dtype_name(), folder, load=_load_gguf)
        return folder
    finally:
        if saved is None:
            os.environ.pop("HIERPLAN_CACHE_DIR", None)
        else:
            os.environ["HIERPLAN_CACHE_DIR"] = saved


def transformers_serve(folder: Path, workdir: Path, port: int | None = None) -> Server:
    """``transformers serve FOLDER``: the folder's path is the one model it serves (requests must name it)."""
    port = port or free_port()
    command = [sys.executable, "-m", "transformers.cli.transformers", "serve", str(folder),
               "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", "--dtype", "auto"]
    return start(command, port=port, model=str(folder), workdir=workdir, ready_path="/health")


# ---------------------------------------------------------------- llama.cpp's server


def llama_python() -> Path | None:
    """The interpreter of the venv ``make test-servers`` builds llama-cpp-python[server] into, if built."""
    venv = Path(os.environ.get(LLAMA_VENV_ENV) or DEFAULT_LLAMA_VENV)
    python = venv / "bin" / "python"
    if not python.is_file():
        return None
    probe = subprocess.run([str(python), "-c", "import llama_cpp.server"], capture_output=True, timeout=120)
    return python if probe.returncode == 0 else None


def llama_server(python: Path, gguf: Path, workdir: Path, *, alias: str = "smollm2", api_key: str | None = None,
                 port: int | None = None) -> Server:
    port = port or free_port()
    threads = str(max(1, min(4, os.cpu_count() or 1)))
    command = [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", threads,
               "--n_threads_batch", threads, "--verbose", "False"]
    if api_key:
        command += ["--api_key", api_key]
    return start(command, port=port, model=alias, workdir=workdir, ready_path="/v1/models")
