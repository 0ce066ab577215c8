"""Serving the page with uvicorn: the model loads once, in the background, while the page already answers."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from hierplan.store import RunStore, display_name
from hierplan.ui.runner import Runner

log = logging.getLogger("hierplan.ui")
# An open event stream must not hold a stopping server; runs are interrupted at once anyway.
GRACEFUL_S = 2


def make_server(db: str, options: dict[str, Any], *, host: str = "127.0.0.1", port: int = 8765,
                token: str | None = None, loopback: bool = True, runner: Runner | None = None):
    """A uvicorn Server for the page (not started). The database is opened here, so a bad --db fails at once."""
    import uvicorn

    from hierplan.ui.app import create_app

    RunStore.open(db).close()
    runner = runner or Runner(db, options)
    app = create_app(db, options, token=token, loopback=loopback, runner=runner)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=GRACEFUL_S, lifespan="on")
    return uvicorn.Server(config), runner


def preload(runner: Runner) -> None:
    """Load the model now, so the first run does not wait for it; a failure shows on the run that needs it."""
    def load() -> None:
        try:
            runner.models()
        except Exception as exc:  # noqa: BLE001 - the first run retries and records the error
            log.warning("hierplan ui: the model did not load (%s); runs will try again", " ".join(str(exc).split()))

    threading.Thread(target=load, name="hierplan-model-load", daemon=True).start()


def bind(host: str, port: int):
    """The listening socket, bound here so a taken port is one clear line and port 0 is known before serving."""
    import socket

    from hierplan.errors import UsageError

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror} (choose another --port)") from exc
    sock.listen(128)
    return sock


def serve(db: str, options: dict[str, Any], *, host: str, port: int, token: str | None, loopback: bool,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until Ctrl-C or SIGTERM; then the runs still working are marked interrupted (the app's lifespan)."""
    server, runner = make_server(db, options, host=host, port=port, token=token, loopback=loopback)
    sock = bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    preload(runner)
    if on_ready:
        on_ready(f"http://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{bound_port}")
    log.info("serving %s", display_name(db))
    server.run(sockets=[sock])
