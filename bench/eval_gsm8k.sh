#!/usr/bin/env bash
# GSM8K evaluation of the agent, with the planner's JSON constraint on and off.
# Usage: bench/eval_gsm8k.sh [LIMIT] [OUT_ROOT]   (defaults: 8, eval-out/gsm8k-<timestamp>)
# Each task takes ~1-2 minutes with the embedded model on a 2-core CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT="${1:-8}"
ROOT="${2:-eval-out/gsm8k-$(date +%Y%m%d-%H%M%S)}"
TASKS="${GSM8K_TASKS:-/work/shared/eval/gsm8k_dev100.jsonl}"
PY="${PYTHON:-.venv/bin/python}"
# One torch/OpenMP thread per process by default: on a shared 2-core machine with other model processes, two
# spinning OpenMP threads made one constrained planner call take 20+ minutes; one thread took about 1 minute.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-1}"
# `hierplan eval` through the module, so this works whether or not main.py has wired the command yet.
run_eval() {
  "$PY" - "$@" <<'PY'
import argparse, sys
from hierplan.cli import eval_cmd
from hierplan.cli.main import main, build_parser
parser = build_parser()
if "eval" not in parser._subparsers._group_actions[0].choices:
    p = argparse.ArgumentParser(prog="hierplan"); sub = p.add_subparsers(required=True)
    eval_cmd.add_parser(sub); args = p.parse_args(["eval", *sys.argv[1:]]); sys.exit(args.func(args))
sys.exit(main(["eval", *sys.argv[1:]]))
PY
}
run_eval "$TASKS" --limit "$LIMIT" --seed 7 --out "$ROOT/constrained"
run_eval "$TASKS" --limit "$LIMIT" --seed 7 --no-constrain --out "$ROOT/no-constrain"
echo "summaries: $ROOT/constrained/summary.md $ROOT/no-constrain/summary.md"
