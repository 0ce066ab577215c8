"""What every command takes: --db (the run database) and --debug (tracebacks)."""

from __future__ import annotations

import argparse

RUN_DB_HELP = ("run database: a SQLite file PATH or a postgresql:// URL (default: $HIERPLAN_DB or runs.sqlite "
               "in the state directory; ':memory:' for none)")


def add_common_options(p: argparse.ArgumentParser, db_help: str = RUN_DB_HELP) -> None:
    p.add_argument("--db", metavar="PATH|URL", help=db_help)
    p.add_argument("--debug", action="store_true", help="show tracebacks")


def db_path(args: argparse.Namespace) -> str:
    """The run database: --db, else $HIERPLAN_DB, else runs.sqlite in the state directory."""
    from hierplan.config import default_db_path

    return args.db or default_db_path()
