"""The `hierplan` command. Only argparse at import time: heavy modules load inside the commands."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points

from hierplan import __version__

COMMANDS_GROUP = "hierplan.commands"


def build_parser() -> argparse.ArgumentParser:
    from hierplan.cli import history_cmd, inspect_cmd, models_cmd, run_cmd, sandbox_cmd, serve_cmd, ui_cmd
    from hierplan.cli.common import add_common_options

    common = argparse.ArgumentParser(add_help=False)
    add_common_options(common)

    parser = argparse.ArgumentParser(
        prog="hierplan", description="A local hierarchical planner agent: plan a task, run each step with an "
                                     "LLM or sandboxed Python, write one answer; every step is saved.")
    parser.add_argument("--version", action="version", version=f"hierplan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    run_cmd.add_parsers(sub, common)
    serve_cmd.add_parser(sub, common)
    inspect_cmd.add_parsers(sub, common)
    history_cmd.add_parsers(sub, common)
    models_cmd.add_parser(sub)
    add_common_options(sandbox_cmd.add_parser(sub))
    ui_cmd.add_parser(sub, common)
    # Commands that sit above the product plug in here (the evaluation's `eval` command): the product never
    # imports them.
    for command in entry_points(group=COMMANDS_GROUP):
        command.load()(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv  # the command line as given, for records of what was run (eval's summary)
    try:
        return args.func(args)
    except Exception as exc:  # noqa: BLE001 - the one place errors become exit codes
        from hierplan.errors import HierplanError

        if getattr(args, "debug", False):
            raise
        if isinstance(exc, HierplanError):
            print(f"hierplan: error: {one_line(str(exc))}", file=sys.stderr)
            return exc.exit_code
        print(f"hierplan: error: {type(exc).__name__}: {one_line(str(exc))} (run again with --debug for the traceback)",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("hierplan: interrupted", file=sys.stderr)
        return 130


def one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
