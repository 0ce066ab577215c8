"""Prompt text for every node. Kept together so wording changes are reviewed in one place."""

from __future__ import annotations

PLANNER_SYSTEM = """You are a planner. Break the user's task into 3 to 8 concrete steps.
Reply with one JSON object only, in this shape:
{"goal": "...", "assumptions": ["..."], "steps": [{"id": 1, "title": "...", "instruction": "...", "tool": "llm", "expected_output": "..."}]}
Rules: ids are 1, 2, 3, ... in order. "tool" is "python" when the step needs calculation or code, "llm" for writing or reasoning, "none" when no tool is needed. Keep every text short."""

# Worked examples shown before the task as earlier chat turns: a small model copies their shape and tone far
# better than it follows rules. One calculation task and one writing task, so neither tool is implied. The
# calculation is one program (on the dev set, plans that split it over several steps lost values between steps
# and cost a program each), then two presenting steps (tool_choice gives them tool "none": no model call).
PLANNER_EXAMPLES: tuple[tuple[str, dict], ...] = (
    ("A shop sells pens for $2 each. Tom buys 3 pens and pays with a $10 bill. How much change does he get?",
     {"goal": "Tom's change in dollars", "assumptions": ["No tax"], "steps": [
         {"id": 1, "title": "Compute the change",
          "instruction": "In one program: the cost of the pens, then the bill minus the cost.",
          "tool": "python", "expected_output": "The change", "depends_on": []},
         {"id": 2, "title": "Explain", "instruction": "Say how the change follows from the cost and the bill.",
          "tool": "llm", "expected_output": "One sentence", "depends_on": [1]},
         {"id": 3, "title": "Answer", "instruction": "State the change.", "tool": "llm",
          "expected_output": "The number", "depends_on": [1]}]}),
    ("Write a short thank-you note to a colleague who helped with a project.",
     {"goal": "A short, warm thank-you note", "assumptions": ["The name is unknown"], "steps": [
         {"id": 1, "title": "Key points", "instruction": "List what the colleague did and why it mattered.",
          "tool": "llm", "expected_output": "Two or three points", "depends_on": []},
         {"id": 2, "title": "Draft", "instruction": "Write three to five sentences from the key points.",
          "tool": "llm", "expected_output": "The draft note", "depends_on": [1]},
         {"id": 3, "title": "Polish", "instruction": "Make the tone clear and friendly.",
          "tool": "llm", "expected_output": "The final note", "depends_on": [2]}]}),
)

PLANNER_RETRY_SYSTEM = """Return ONLY valid JSON. No prose, no Markdown, no code fences.
The JSON object must have exactly these keys: "goal" (string), "assumptions" (list of strings), "steps" (list of 3 to 8 objects).
Each step object has: "id" (integer 1, 2, 3, ... in order), "title" (string), "instruction" (string), "tool" (one of "none", "llm", "python"), "expected_output" (string).
Start your reply with { and end it with }."""

PLANNER_USER = "Task: {task}"
# After the task (and after a replanner's request), only when the graph has registered tools: one line per tool.
TOOLS_OFFERED = """
Tools: a step may also name one of these as its "tool"; the tool is then called with arguments taken from the step's instruction.
{tools}"""
TOOL_LINE = "- {name}: {description}"

# A registered tool's step: the model writes the call's arguments (constrained to the tool's JSON schema where the
# model takes one).
TOOL_SYSTEM = """You fill in the arguments of one call of the tool "{name}" for one step of a plan.
The tool: {description}
Its arguments, as a JSON schema: {schema}
Reply with one JSON object only: the arguments, with the values the task, the step and the results of earlier steps give."""
TOOL_USER = "Task: {task}\n{step}"

# Only when the run has files: after the planner's task, an LLM step's request and a Python step's request.
FILES_GIVEN = "\nThe user's files, which a Python step reads at ./data/NAME:"
FILE_LINE = "- {name} ({size:,} bytes): {preview}"
FILES_FOR_CODE = ("The files are read-only. Save any chart (matplotlib: plt.savefig('out/chart.png')) or table "
                  "(a CSV) the step makes under ./out/; they are kept with the answer.")
# Only when Python steps saved files under out/: after the aggregator's results.
ARTIFACTS_SAVED = "\nFiles the steps saved, kept with the answer (name them where they help): {names}"

STEP_SYSTEM = """You carry out one step of a plan for this task: {task}
Goal: {goal}
Assumptions: {assumptions}
Answer the step directly and concisely."""

STEP_USER = """{context}Step {step_id}: {title}
Instruction: {instruction}
Expected output: {expected_output}"""

CODE_SYSTEM = """You write a short Python 3 program for one step of a plan.
Reply with the program only, in a ```python block. The programs of earlier steps have already run, so their variables exist: use them. Write into the program every other value it needs, taken from the task and from the results of earlier steps, and print the result with print(): just the number when the step asks for a quantity.
Use only the standard library, numpy or pandas. No input(), no network, no files outside the current directory."""

CODE_USER = "Task: {task}\n{step}"
# After the request of a numeric task's last Python step: its printed number is the plan's answer. Untold, short
# plans often ended on a part of the answer (one day's hours of a week's, hours asked in minutes; docs/eval.md).
LAST_COMPUTATION = ("\nThis is the plan's last computation: its program prints the answer to the task's question, "
                    "in the unit the question asks for.")

# The independent check of a numeric answer (hierplan.nodes.vote): one program for the whole task.
CHECK_SYSTEM = """You write one short Python 3 program that solves the user's task.
Reply with the program only, in a ```python block. Write every value the task gives into a named variable, compute the answer step by step, and end with print() of the final answer: just the number, in the unit the question asks for.
Use only the standard library. No input()."""
CHECK_USER = "Task: {task}"

# Worked examples, shown before the step as earlier chat turns (a model copies the names of an example given
# inside the system prompt into its own programs; as turns it keeps them apart). One computes a whole answer
# with named values, one is not arithmetic. Each: (task, earlier results as (id, title, output, program or
# None), step, program).
CODE_EXAMPLES: tuple[tuple[str, tuple[tuple[int, str, str, str | None], ...], dict, str], ...] = (
    (PLANNER_EXAMPLES[0][0], (),
     {"id": 1, "title": "Compute the change", "instruction": PLANNER_EXAMPLES[0][1]["steps"][0]["instruction"],
      "expected_output": "The change in dollars"},
     "price = 2\npens = 3\npaid = 10\ncost = pens * price\nchange = paid - cost\nprint(change)"),
    ("Which words appear more than once in 'the cat saw the dog and the dog ran'?", (),
     {"id": 1, "title": "Repeated words", "instruction": "Count each word and keep those that appear more than once.",
      "expected_output": "The repeated words"},
     "from collections import Counter\n\ncounts = Counter('the cat saw the dog and the dog ran'.split())\n"
     "print([word for word, n in counts.items() if n > 1])"),
)

CODE_REPAIR_USER = """The previous program failed.
Code:
```python
{code}
```
Error:
{error}
{hint}Write the corrected complete program."""

AGGREGATOR_SYSTEM = """You write the final answer for the user's task from the results of the plan's steps.
Be complete and concrete. If a step failed, do not rely on its output.
Values computed with Python are exact: state the result from them, with the number as printed, and do not redo the arithmetic.
If the task asks for a number, end with a last line of the form "Final answer: <number>"."""

AGGREGATOR_USER = """Task: {task}
Goal: {goal}
Step results:
{results}
{request}"""
AGGREGATOR_REQUEST = "Write the final answer."
# With computed values: short, so the answer ends on the number instead of redoing the arithmetic in prose.
AGGREGATOR_REQUEST_COMPUTED = ("Write the final answer in one or two sentences, stating the result from the "
                               "computed values, then a last line \"Final answer: <number>\".")

# A task that asks for no quantity: the reply itself, in the form the task asks for (on the writing tasks the
# numeric prompt above made a small model end a checklist on "Final answer: 5"). The task comes last, after the
# notes: a small model follows best the instructions it read last.
AGGREGATOR_WRITING_SYSTEM = """You write the reply to the user's task. Notes from the steps of a plan are given as material: use what helps and leave out the rest.
The reply is the finished answer itself: do not mention the plan, its steps or the notes.
Follow every instruction of the task exactly: its form (bullet points, numbered steps, headings, code blocks), its length, and the words it asks for or forbids."""
AGGREGATOR_WRITING_USER = """Notes from the plan's steps:
{results}

Goal: {goal}
Task: {task}
Write the reply to this task now."""

# The final answer written anew when it broke the task's checkable instructions (the reviser node). The broken
# answer is not shown: asked to correct a draft, the embedded model sent it back unchanged; asked for a new
# answer with the problems named, it followed them (docs/eval.md).
REVISE_SYSTEM = """You write the reply to the user's task. A previous answer broke some of the task's instructions, listed below. Write a new answer that follows every instruction of the task exactly. Reply with the answer only."""
REVISE_USER = """Task: {task}

What the previous answer got wrong:
{problems}

Write the new answer to the task."""

# The aggregator's view of the results (hierplan.nodes.context.aggregator_results): computations first.
COMPUTED_HEADER = "Computed with Python (printed values):\n"
OTHER_RESULTS_HEADER = "Other steps:\n"
LAST_COMPUTED = "Last computed value: {value}"

CONTEXT_HEADER = "Results of earlier steps:\n"
# After a successful Python step's output, in a Python step's request (hierplan.nodes.context.earlier_programs).
EARLIER_PROGRAM = "\nIts program, already run (its variables exist):\n```python\n{code}\n```"

REPLANNER_SYSTEM = """A step of the plan failed. Write the steps that should replace the unfinished ones, so the task can still be done.
Reply with one JSON object only: {"steps": [{"id": 1, "title": "...", "instruction": "...", "tool": "llm", "expected_output": "..."}]}
Use 1 to 4 steps. "tool" is "python", "llm" or "none". Do not repeat the failed approach."""

REPLANNER_USER = """Task: {task}
Goal: {goal}
Finished steps:
{done}
Failed step {failed_id} ({failed_title}): {error}
Unfinished steps: {pending}"""
