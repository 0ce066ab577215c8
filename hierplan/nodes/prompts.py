"""Prompt text for every node. Kept together so wording changes are reviewed in one place."""

from __future__ import annotations

PLANNER_SYSTEM = """You are a planner. Break the user's task into 3 to 8 concrete steps.
Reply with one JSON object only, in this shape:
{"goal": "...", "assumptions": ["..."], "steps": [{"id": 1, "title": "...", "instruction": "...", "tool": "llm", "expected_output": "..."}]}
Rules: ids are 1, 2, 3, ... in order. "tool" is "python" when the step needs calculation or code, "llm" for writing or reasoning, "none" when no tool is needed. Keep every text short."""

PLANNER_RETRY_SYSTEM = """Return ONLY valid JSON. No prose, no Markdown, no code fences.
The JSON object must have exactly these keys: "goal" (string), "assumptions" (list of strings), "steps" (list of 3 to 8 objects).
Each step object has: "id" (integer 1, 2, 3, ... in order), "title" (string), "instruction" (string), "tool" (one of "none", "llm", "python"), "expected_output" (string).
Start your reply with { and end it with }."""

PLANNER_USER = "Task: {task}"

STEP_SYSTEM = """You carry out one step of a plan for this task: {task}
Goal: {goal}
Assumptions: {assumptions}
Answer the step directly and concisely."""

STEP_USER = """{context}Step {step_id}: {title}
Instruction: {instruction}
Expected output: {expected_output}"""

CODE_SYSTEM = """You write Python 3 code for one step of a plan for this task: {task}
Goal: {goal}
Reply with one complete Python program only. It must print its result with print(). Use only the standard library, numpy or pandas. No input(), no network, no files outside the current directory."""

CODE_REPAIR_USER = """The previous program failed.
Code:
```python
{code}
```
Error:
{error}
Write the corrected complete program."""

AGGREGATOR_SYSTEM = """You write the final answer for the user's task from the results of the plan's steps.
Be complete and concrete. If a step failed, do not rely on its output.
If the task asks for a number, end with a last line of the form "Final answer: <number>"."""

AGGREGATOR_USER = """Task: {task}
Goal: {goal}
Step results:
{results}
Write the final answer."""

CONTEXT_HEADER = "Results of earlier steps:\n"

REPLANNER_SYSTEM = """A step of the plan failed. Write the steps that should replace the unfinished ones, so the task can still be done.
Reply with one JSON object only: {"steps": [{"id": 1, "title": "...", "instruction": "...", "tool": "llm", "expected_output": "..."}]}
Use 1 to 4 steps. "tool" is "python", "llm" or "none". Do not repeat the failed approach."""

REPLANNER_USER = """Task: {task}
Goal: {goal}
Finished steps:
{done}
Failed step {failed_id} ({failed_title}): {error}
Unfinished steps: {pending}"""
