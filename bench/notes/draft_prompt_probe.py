"""A one-off probe (2026-12-06): on IFEval tune rows only, the writing aggregator's draft as it prompts now
("hierplan", requirements read by the patterns, before any check or rewrite) against the model alone's prompt
("direct"), same sampling; writes records in the form bench/blind_pairs.py make reads.

    .venv/bin/python bench/notes/draft_prompt_probe.py 12 bench-out/draft-probe.jsonl
    python bench/blind_pairs.py make bench-out/draft-probe.jsonl --out bench-out/blind/draft-probe   # then a reader

Run once, 12 rows (seed 7 sample of rows 1-240), read blind by a helper: the aggregator's draft better in substance
on 6, the model alone's on 3, 3 ties (mean 2.42 vs 1.83 of 5).
"""
import json, random, sys, time
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[1]))
import vs_instructions as v
from langchain_core.messages import HumanMessage, SystemMessage
from hierplan import load_chat_model
from hierplan.config import AGGREGATOR_MAX_NEW_TOKENS
from hierplan.nodes.aggregator import aggregator_messages
from hierplan.rules.instructions import read_instructions, ALWAYS
from hierplan.rules.plan import whole_task_plan
from hierplan.rules.kind import WRITING
from hierplan.rules.substance import not_the_piece
rows = [json.loads(l) for l in open(v.TASKS)]
picked = sorted(random.Random(7).sample(range(1, 241), int(sys.argv[1])))
out = open(sys.argv[2], 'a')
model = load_chat_model()
for n in picked:
    task = rows[n - 1]['prompt']
    req = read_instructions(task)
    state = {"kind": WRITING, "task": task, "plan": whole_task_plan(task, WRITING, req), "results": [], "requirements": req}
    for system, msgs in (("hierplan", aggregator_messages(state)),
                         ("direct", [SystemMessage(v.DIRECT_SYSTEM), HumanMessage(task)])):
        t = time.time()
        text = model.invoke(msgs, temperature=0.2, top_p=0.9, max_tokens=AGGREGATOR_MAX_NEW_TOKENS, seed=11 + n).content.strip()
        bad = not_the_piece(text, task, [*req, *ALWAYS])
        out.write(json.dumps({"system": system, "row": n, "prompt": task, "final": text, "seconds": round(time.time() - t, 1),
                              "words": len(text.split()), "not_the_piece": bad}) + "\n"); out.flush()
        print(n, system, round(time.time() - t, 1), len(text.split()), bool(bad), flush=True)
