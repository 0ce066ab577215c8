#!/usr/bin/env bash
# GSM8K evaluation of the agent, with the planner's JSON constraint on and off, side by side.
# Usage: bench/eval_gsm8k.sh [LIMIT] [OUT_ROOT]   (defaults: 8, eval-out/gsm8k-<timestamp>)
# Each task takes ~1-3 minutes with the embedded model on a 2-core CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT="${1:-8}"
ROOT="${2:-eval-out/gsm8k-$(date +%Y%m%d-%H%M%S)}"
TASKS="${GSM8K_TASKS:-../shared/eval/gsm8k_dev100.jsonl}"
HIERPLAN="${HIERPLAN:-.venv/bin/hierplan}"
# The two modes run at once, one torch thread each, so both see the same machine.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-1}"
"$HIERPLAN" eval "$TASKS" --limit "$LIMIT" --seed 7 --out "$ROOT/constrained" --db :memory: &
"$HIERPLAN" eval "$TASKS" --limit "$LIMIT" --seed 7 --no-constrain --out "$ROOT/no-constrain" --db :memory: &
wait
echo "summaries: $ROOT/constrained/summary.md $ROOT/no-constrain/summary.md"
