#!/usr/bin/env bash
# Time per task of two checkouts of hierplan in the same conditions: the tasks are run one at a time,
# alternating between the checkouts (A then B, then B then A, ...), so a busy machine slows both alike.
# Usage: bench/eval_side_by_side.sh OLD_CHECKOUT NEW_CHECKOUT TASKS.jsonl FIRST LAST OUT_DIR [eval options]
# Each run is `hierplan eval` on a one-line task file; its results.jsonl gives the task's seconds (model
# loading is not included). Prints one line per task and the mean seconds per task of each checkout.
set -euo pipefail
old=$1 new=$2 tasks=$3 first=$4 last=$5 out=$6; shift 6
py=${PYTHON:-python}
mkdir -p "$out"
for i in $(seq "$first" "$last"); do
  sed -n "${i}p" "$tasks" > "$out/task-$i.jsonl"
  if (( i % 2 )); then order="old new"; else order="new old"; fi
  for which in $order; do
    src=$old; [[ $which == new ]] && src=$new
    PYTHONPATH=$src "$py" -m hierplan.cli.main eval "$out/task-$i.jsonl" --db :memory: \
      --out "$out/$which-$i" "$@" >/dev/null 2>"$out/$which-$i.log"
  done
done
"$py" - "$out" "$first" "$last" <<'PY'
import json, sys
out, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sums = {"old": [], "new": []}
for i in range(first, last + 1):
    row = {}
    for which in sums:
        [rec] = [json.loads(l) for l in open(f"{out}/{which}-{i}/results.jsonl") if l.strip()]
        sums[which].append(rec["seconds"])
        row[which] = f"{rec['seconds']:.1f}s correct={rec['correct']} python={rec['python_steps']}"
    print(f"task {i}: old {row['old']} | new {row['new']}")
for which, secs in sums.items():
    print(f"{which}: {sum(secs) / len(secs):.1f} s per task over {len(secs)} tasks")
print(f"ratio new/old: {sum(sums['new']) / sum(sums['old']):.2f}")
PY
