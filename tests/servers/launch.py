"""Start a real server for a test: 127.0.0.1, a free port, a temp dir, stopped afterwards.

Used for llama.cpp's server (tests/llama_server.py) and LangGraph Server (tests/server_fixtures.py). A server lives
at most SERVER_LIFETIME_S and dies with the test process.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

READY_TIMEOUT_S = 180  # a cold start on 2 busy cores; about 5 s on an idle machine
SERVER_LIFETIME_S = 1800


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
