"""A one-off probe (2026-12-06), kept for the figure it gave in docs/eval.md: the writing aggregator's draft alone, for
tune prompts that ask for one letter case, asked for the case (A, as before) or told the case is applied by program
(C, as now), same seed; counts the drafts that are no answer (rules.substance.not_the_piece).

    .venv/bin/python bench/notes/case_note_probe.py 52,103,136,150,171,231,196,18,49

Requirements are read by the patterns only (no model read); row 171's "no answer" in both was a misread of "all letters"
as a letter to write, fixed since, so it is left out of the figure.
"""
import json, sys, time
from langchain_core.messages import HumanMessage, SystemMessage
from hierplan import load_chat_model
from hierplan.nodes import prompts
from hierplan.nodes.aggregator import requirements_note
from hierplan.rules.instructions import read_instructions, ALWAYS
from hierplan.rules.plan import whole_task_plan
from hierplan.rules.kind import WRITING
from hierplan.rules.substance import not_the_piece
import pathlib
rows=[json.loads(l) for l in open(pathlib.Path(__file__).resolve().parents[3] / 'shared/eval/instructions_dev.jsonl')]
sel=[int(x) for x in sys.argv[1].split(',')]
model=load_chat_model()
res={'A':0,'C':0}
for n in sel:
    task=rows[n-1]['prompt']
    req=read_instructions(task)
    goal=whole_task_plan(task, WRITING, req)['goal']
    for v in 'AC':
        from hierplan.rules.checklist import describe
        # A: every requirement listed to the writer, the case too (the prompt before the change)
        listed = prompts.REQUIREMENTS_NOTE.format(items="\n".join(f"- {describe(r)}" for r in req)) if req else ""
        user = prompts.AGGREGATOR_WRITING_USER.format(notes='', goal=goal, task=task, requirements=listed)
        if v=='C':
            from hierplan.rules.checklist import describe
            nocase=[r for r in req if r['kind'] not in ('lowercase','uppercase')]
            user = prompts.AGGREGATOR_WRITING_USER.format(notes='', goal=goal, task=task, requirements=requirements_note(nocase)+"Write in ordinary letter case: the letter case the task asks for is applied to your reply afterwards.\n")
        t=time.time()
        msg=model.invoke([SystemMessage(prompts.AGGREGATOR_WRITING_SYSTEM), HumanMessage(user)], temperature=0.2, max_tokens=700, seed=11)
        out=msg.content.strip()
        bad=not_the_piece(out, task, [*req,*ALWAYS])
        res[v]+= bad is not None
        print(n, v, round(time.time()-t,1), 'BAD:'+bad[:40] if bad else 'ok', '|', out[:100].replace('\n',' '), flush=True)
print(res)
