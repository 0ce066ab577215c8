"""`hierplan ui`: the local web page (hierplan.ui) on 127.0.0.1, over the same run database as the CLI."""

from __future__ import annotations

import argparse
import sys

from hierplan.errors import UsageError

DEFAULT_PORT = 8765


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    from hierplan.app.fields import add_arguments

    p = sub.add_parser("ui", parents=[parent], help="a local web page to start, watch, approve and inspect runs")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free one)")
    p.add_argument("--host", help="listen on this address instead of 127.0.0.1 (needs --token)")
    p.add_argument("--token", help="a secret every request must carry (required with --host)")
    # the one model the server loads, shared by every run it works on; the other options are every run's
    # defaults (the page's form overrides them)
    add_arguments(p, skip=("approve",))
    p.set_defaults(func=cmd_ui)


def check_listen(host: str | None, token: str | None) -> tuple[str, bool]:
    """(address to bind, whether it is loopback-only). Off loopback a token is required."""
    if token is not None and len(token) < 8:
        raise UsageError("--token must be at least 8 characters")
    if host is None:
        return "127.0.0.1", True
    if not token:
        raise UsageError("--host serves the page beyond this machine: give --token SECRET too "
                         "(every request must carry it)")
    return host, False


def cmd_ui(args: argparse.Namespace) -> int:
    from hierplan.app.fields import from_args
    from hierplan.cli.common import db_path

    host, loopback = check_listen(args.host, args.token)
    db = db_path(args)
    if db == ":memory:":
        raise UsageError("hierplan ui needs a run database that outlives a request: a file or a postgresql:// URL")
    try:
        from hierplan.ui.server import serve
    except ImportError as exc:  # starlette/uvicorn/jinja2 come with the server extra
        raise UsageError(f"hierplan ui needs {exc.name}: pip install 'hierplan[server]'") from exc
    options = from_args(args)
    from hierplan.app.agent import check_models
    from hierplan.options import RunOptions

    check_models(RunOptions.from_dict(options))  # the page's one model: its engine is installed, or one line
    if options.get("mcp"):  # checked before the page is served; each run lists the servers' tools again
        from pathlib import Path

        from hierplan.tools.mcp import read_config

        options["mcp"] = str(Path(options["mcp"]).expanduser().resolve())
        read_config(options["mcp"])

    def ready(url: str) -> None:
        shown = f"{url}/?token=…" if args.token else url  # the token stays off the terminal's scrollback
        print(f"hierplan ui: {shown} (Ctrl-C stops; runs still working are left interrupted, resumable)",
              file=sys.stderr, flush=True)

    serve(db, options, host=host, port=args.port, token=args.token, loopback=loopback, on_ready=ready)
    return 0
