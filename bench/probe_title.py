"""Probe: the writer's first draft where the task asks for a <<title>>, under four prompts, on the same seeds.

    python bench/probe_title.py bench-out/probe-title.jsonl            # variants A B C D
    python bench/probe_title.py --summary bench-out/probe-title.jsonl

The prompts are own1's and own2's that ask for a title (bench/data/own), the first MAX_ROWS of them. The writer's
messages are built as the aggregator builds them for a plan written by rule (the task, the requirements the
regexes read), then changed per variant:
- A: the goal line shown, the title said as "a title wrapped in << and >>" (the prompt before eb9b2ec);
- B: no goal line;
- C: no goal line, the title said as the piece's first line with the whole piece below it (the prompt since eb9b2ec);
- D: no goal line, the title not said at all.
Per draft: its words and whether it is only its title. A probe of one prompt change, kept with the figures it gave
(bench/notes/eval-notebook.md).
"""
import json
import sys
import time
from collections import defaultdict

from langchain_core.messages import HumanMessage

from hierplan import load_chat_model
from hierplan.config import SamplingConfig
from hierplan.nodes import prompts
from hierplan.nodes.aggregator import aggregator_messages
from hierplan.nodes.model_call import invoke_model
from hierplan.rules.instructions import read_instructions
from hierplan.rules.plan import whole_task_plan

SETS = ("bench/data/own/ifeval_own1.jsonl", "bench/data/own/ifeval_own2.jsonl")
MAX_ROWS = 8
SEEDS = (1, 2)
NOW = "- a title wrapped in << and >> on its own first line, then the whole piece below it"
BEFORE = "- a title wrapped in << and >>"


def messages(task: str, variant: str) -> list:
    requirements = read_instructions(task)
    shown = [r for r in requirements if r["kind"] != "title"] if variant == "D" else requirements
    state = {"task": task, "kind": "writing", "plan": whole_task_plan(task, "writing", requirements),
             "plan_source": "rule", "results": [], "requirements": shown}
    system, user = aggregator_messages(state)
    text = user.content
    if variant == "A":
        text = prompts.AGGREGATOR_WRITING_GOAL.format(goal=state["plan"]["goal"]) + text.replace(NOW, BEFORE)
    elif variant == "B":
        text = text.replace(NOW, BEFORE)
    return [system, HumanMessage(text)]


def only_title(text: str) -> bool:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return len(lines) == 1 and lines[0].strip().startswith("<<")


def summary(path: str) -> None:
    by = defaultdict(list)
    for line in open(path):
        record = json.loads(line)
        by[record["variant"]].append(record)
    for variant, records in sorted(by.items()):
        titles = sum(r["only_title"] for r in records)
        words = sorted(r["words"] for r in records)
        print(f"{variant}: {len(records)} drafts, only the title {titles}, median words {words[len(words) // 2]}")


def main() -> None:
    if sys.argv[1] == "--summary":
        summary(sys.argv[2])
        return
    rows = [json.loads(line) for path in SETS for line in open(path)]
    rows = [r for r in rows if "detectable_format:title" in r["instruction_id_list"]][:MAX_ROWS]
    model, sampling = load_chat_model(None), SamplingConfig().aggregator
    with open(sys.argv[1], "w") as out:
        for row in rows:
            for variant in ("A", "B", "C", "D"):
                for seed in SEEDS:
                    start = time.time()
                    text, _ = invoke_model(model, messages(row["prompt"], variant), sampling, node="aggregator",
                                           seed=seed)
                    record = {"key": row["key"], "variant": variant, "seed": seed, "words": len(text.split()),
                              "only_title": only_title(text), "seconds": round(time.time() - start, 1),
                              "text": text[:300]}
                    out.write(json.dumps(record) + "\n")
                    out.flush()


if __name__ == "__main__":
    main()
