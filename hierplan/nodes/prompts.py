"""Prompt text for every node. Kept together so wording changes are reviewed in one place."""

from __future__ import annotations

PLANNER_SYSTEM = """You are a planner. Break the user's task into the steps it needs, each one a real part of the work.
A question one program answers is one python step. One piece of writing (a letter, an essay, a story, a poem, a post), however long and whatever rules it must follow, is one llm step. A task with distinct parts (a plan, a project, a checklist across several areas) gets 3 to 8 steps, one per part, each saying concretely what to write or compute. A step the task already answers is not a step, and no step only restates earlier results: the final answer does that.
Reply with one JSON object only, in this shape:
{"goal": "...", "assumptions": ["..."], "steps": [{"id": 1, "title": "...", "instruction": "...", "tool": "llm", "expected_output": "..."}]}
Rules: ids are 1, 2, 3, ... in order. "tool" is "python" when the step needs calculation or code to run, "llm" for writing or reasoning, "none" when no tool is needed. Keep every text short."""

# Worked examples shown before the task as earlier chat turns, those of the task's kind (rules.kind): a small model
# copies their shape and tone far better than it follows rules, the number of steps included (with a 4-step
# writing example beside the word problems, the embedded model planned 3-4 steps for word problems). A question
# asking for a quantity is one program, however many parts it has (plans that split it over
# several steps lost values between steps and cost a program each; steps that only presented the number cost
# planning tokens for nothing); a short piece of writing is one step, and a task with distinct parts one step per
# part, each one's instruction naming what that part must contain. One piece of writing with rules about its form
# is one step too: split into sections, each step wrote its section in full and the answer wrote the piece again,
# at several times the model alone's time (bench/notes/eval-notebook.md), where the rules are the final answer's to
# follow (check_instructions, reviser). Two steps, key points then a draft the answer revises, were tried too: no
# better than one step on the same prompts, and slower (bench/notes/eval-notebook.md).
CALCULATION_EXAMPLE = (
    "A shop sells pens for $2 each. Tom buys 3 pens and pays with a $10 bill. How much change does he get?",
    {"goal": "Tom's change in dollars", "assumptions": ["No tax"], "steps": [
        {"id": 1, "title": "Compute the change",
         "instruction": "In one program: the cost of the pens, then the bill minus the cost.",
         "tool": "python", "expected_output": "The change", "depends_on": []}]})
PLANNER_EXAMPLES: dict[str, tuple[tuple[str, dict], ...]] = {
    "numeric": (
        CALCULATION_EXAMPLE,
        ("A train goes 60 km an hour for 2.5 hours, then 80 km an hour for 1.5 hours. What is its average speed?",
         {"goal": "The average speed in km per hour", "assumptions": ["Speeds are constant"], "steps": [
             {"id": 1, "title": "Compute the average speed",
              "instruction": "In one program: each part's distance, the total distance and the total time, then "
              "distance divided by time.", "tool": "python", "expected_output": "The average speed",
              "depends_on": []}]}),
    ),
    "writing": (
        ("Write a short thank-you note to a colleague who helped with a project.",
         {"goal": "A short, warm thank-you note", "assumptions": ["The name is unknown"], "steps": [
             {"id": 1, "title": "Write the note",
              "instruction": "Three to five warm sentences: what the colleague did, why it mattered, thanks.",
              "tool": "llm", "expected_output": "The note", "depends_on": []}]}),
        ("Write a 300-word blog post about keeping houseplants alive in winter. Put a title in <<like this>> on top "
         "and leave out commas altogether.",
         {"goal": "A 300-word post on houseplants in winter", "assumptions": ["Readers are beginners"], "steps": [
             {"id": 1, "title": "Write the post",
              "instruction": "About 300 words on light, watering and warmth in winter; a title in "
              "<<...>> on top; no commas.", "tool": "llm", "expected_output": "The post", "depends_on": []}]}),
        ("Plan the first week of a new backend developer in a team of five.",
         {"goal": "A day-by-day first week a team lead can follow", "assumptions": ["The team uses Git and CI"],
          "steps": [
              {"id": 1, "title": "Access and setup", "instruction": "List the accounts, tools and local setup "
               "needed on day one, and who provides each.", "tool": "llm", "expected_output": "A checklist",
               "depends_on": []},
              {"id": 2, "title": "Codebase tour", "instruction": "Days two and three: which services to read "
               "first, with whom, and a small first task.", "tool": "llm", "expected_output": "A plan for two days",
               "depends_on": [1]},
              {"id": 3, "title": "First change shipped", "instruction": "Days four and five: take the first task "
               "through review, tests and deployment.", "tool": "llm", "expected_output": "The steps",
               "depends_on": [2]},
              {"id": 4, "title": "Check-ins", "instruction": "When the lead and a buddy meet the new developer "
               "and what they ask.", "tool": "llm", "expected_output": "A short schedule", "depends_on": []}]}),
    ),
}

# Shown after the kind's examples only when the run has the user's files: without it the embedded model split a
# question about a CSV into read / filter / sum steps, each a program of its own, and made up conditions between
# them ("only the shipped orders" in a question about all of them). It filters nothing: with a filter in
# it ("keep the rows whose product is P-7"), plans filtered on a column the question never named. Its file is made
# up, previewed as a real one is (hierplan.tools.files.preview).
FILE_EXAMPLE = (
    "Which product sold the most units in sales.csv, and how many?",
    "sales.csv",
    b"date,region,product,units\n2026-01-04,north,P-7,12\n2026-01-04,south,P-2,5\n2026-01-05,south,P-7,20\n"
    b"2026-01-06,east,P-7,9\n2026-01-06,north,P-7,15\n",
    {"goal": "The product with the most units sold, and the units", "assumptions": ["Every row is one sale"],
     "steps": [
         {"id": 1, "title": "Units by product",
          "instruction": "In one program: read ./data/sales.csv with pandas, sum units by product, and print the top "
          "product and its units.", "tool": "python", "expected_output": "The product and its units",
          "depends_on": []}]})

# Shown after the kind's examples only when the graph has registered tools: without them the embedded model copied
# the one-program examples and planned a Python step for a fact only a tool knows, calling no tool for a stock
# level or a rate; with only the second, it added a made-up computation to questions a lookup answers.
# Their tools are made up and offered in their own turns, as the real ones are after the task; the grammar lets a
# plan name only the real tools.
TOOL_EXAMPLES = (
    ("How many vacation days does Ana Ruiz have left this year?",
     "- exchange_rate: Today's exchange rate from one currency to another.\n"
     "- staff_record: An employee's record by name: team, start date, vacation days left.\n"
     "- weather: Today's weather forecast for a city.",
     {"goal": "Ana Ruiz's vacation days left", "assumptions": ["This year's record"], "steps": [
         {"id": 1, "title": "Get Ana's record", "instruction": "Look up the staff record of Ana Ruiz.",
          "tool": "staff_record", "expected_output": "Her vacation days left", "depends_on": []}]}),
)

PLANNER_RETRY_SYSTEM = """Return ONLY valid JSON. No prose, no Markdown, no code fences.
The JSON object must have exactly these keys: "goal" (string), "assumptions" (list of strings), "steps" (list of 1 to 8 objects: one for a question one program answers, one per part for a task with parts).
Each step object has: "id" (integer 1, 2, 3, ... in order), "title" (string), "instruction" (string), "tool" (one of "none", "llm", "python"), "expected_output" (string).
Start your reply with { and end it with }."""

PLANNER_USER = "Task: {task}"
# After the task (and after a replanner's request), only when the graph has registered tools: one line per tool.
TOOLS_OFFERED = """
Tools: a step may also name one of these as its "tool"; the tool is then called with arguments taken from the step's instruction. A question one tool call answers is that one step; plan a step for a tool only when the task needs what it gives.
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
Write this step's part of the work in full: concrete, with the detail it needs, at the length it needs. No introduction and no summary of other steps."""

STEP_USER = """{context}Step {step_id}: {title}
Instruction: {instruction}
Expected output: {expected_output}"""

CODE_SYSTEM = """You write a short Python 3 program for one step of a plan.
Reply with the program only, in a ```python block. The programs of earlier steps have already run, so their variables exist: use them. Write into the program every other value it needs, taken from the task and from the results of earlier steps, and print the result with print(): just the number when the step asks for a quantity.
Use only the standard library, numpy, pandas, scipy or scikit-learn. No input(), no network, no files outside the current directory."""

CODE_USER = "Task: {task}\n{step}"
# After the request of a numeric task's last Python step: its printed number is the plan's answer. Untold, short
# plans often ended on a part of the answer (one day's hours of a week's, hours asked in minutes;
# bench/notes/eval-notebook.md).
LAST_COMPUTATION = ("\nThis is the plan's last computation: its program prints the answer to the task's question, "
                    "in the unit the question asks for.")

# The independent check of a numeric answer (hierplan.nodes.vote): one program for the whole task.
CHECK_SYSTEM = """You write one short Python 3 program that solves the user's task.
Reply with the program only, in a ```python block. Write every value the task gives into a named variable, compute the answer step by step, and end with print() of the final answer: just the number, in the unit the question asks for.
Use only the standard library. No input()."""
CHECK_USER = "Task: {task}"
# The same for a question about the user's files: the program reads them, and prints every value asked for in the
# task's format (a question about a table often asks for several).
DATA_CHECK_SYSTEM = """You write one Python 3 program that answers the user's question about their data files.
Reply with the program only, in a ```python block. Read each file from ./data/NAME (a CSV with pandas: pd.read_csv("data/NAME")), using the column names exactly as the file's preview shows them. Compute every value the question asks for, following its constraints (the method, the rounding), and print each answer with print(), in exactly the format the task asks for.
Use only the standard library, numpy, pandas, scipy or scikit-learn. No input(), no network."""
# The one Python step of a numeric plan (rules.plan.whole_task_step) is asked for as the check is: asked with the
# step prompt and its examples, its program followed an instruction that named a part of the way and printed that
# part (the check-cost runs in bench/notes/eval-notebook.md). A model-written plan's instruction follows the task as its
# outline (rules.plan.plan_outline); the request begins as the check's does, so the check, drawn after it, finds
# that beginning in llama.cpp's prompt cache.
PLAN_OUTLINE = "\nThe plan's outline: {instruction}"

# Worked examples, shown before the step as earlier chat turns (a model copies the names of an example given
# inside the system prompt into its own programs; as turns it keeps them apart). One computes a whole answer
# with named values, one is not arithmetic. Each: (task, earlier results as (id, title, output, program or
# None), step, program).
CODE_EXAMPLES: tuple[tuple[str, tuple[tuple[int, str, str, str | None], ...], dict, str], ...] = (
    (CALCULATION_EXAMPLE[0], (),
     {"id": 1, "title": "Compute the change", "instruction": CALCULATION_EXAMPLE[1]["steps"][0]["instruction"],
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
# The task asks to see the working, or states a form (rules.answer.prose_asked).
AGGREGATOR_REQUEST_WORKING = ("Write the answer the task asks for: show step by step how the result follows from the "
                              "task's numbers, using the computed values, in the form the task asks for, then a last "
                              "line \"Final answer: <number>\".")

# A task that asks for no quantity: the reply itself, in the form the task asks for (on the writing tasks the
# numeric prompt above made a small model end a checklist on "Final answer: 5"). The task comes last, after the
# notes: a small model follows best the instructions it read last.
AGGREGATOR_WRITING_SYSTEM = """You write the reply to the user's task. Notes from the steps of a plan, when given, are material: use what helps and leave out the rest.
The reply is the finished answer itself: do not mention the plan, its steps or the notes.
Follow every instruction of the task exactly: its form (bullet points, numbered steps, headings, code blocks), its length, and the words it asks for or forbids."""
AGGREGATOR_WRITING_USER = """{notes}{goal}Task: {task}
{requirements}Write the reply to this task now."""
# The goal of a plan the model wrote (one piece planned by rule is drafted plainly: nodes.aggregator).
AGGREGATOR_WRITING_GOAL = "Goal: {goal}\n"
AGGREGATOR_WRITING_NOTES = """Notes from the plan's steps:
{results}

"""
# The requirements read from the task (nodes.read_requirements), in plain words (rules.checklist.describe).
REQUIREMENTS_NOTE = "The reply must have:\n{items}\n"
# The task asks for one letter case throughout: a program applies it (rules.checks.CASE_KINDS).
CASE_BY_PROGRAM = "Write in ordinary letter case: the letter case the task asks for is applied to your reply afterwards.\n"

# The final answer written anew when it broke the task's checkable instructions (the reviser node). The broken
# answer is not shown: asked to correct a draft, the embedded model sent it back unchanged; asked for a new
# answer with the problems named, it followed them (bench/notes/eval-notebook.md).
REVISE_SYSTEM = """You write the reply to the user's task. A previous answer broke some of the task's instructions, listed below. Write a new answer that follows every instruction of the task exactly. Reply with the answer only."""
REVISE_USER = """Task: {task}

What the previous answer got wrong:
{problems}
{case}
Write the new answer to the task."""

# The task answered plainly: the request as a person asks a chat model, nothing of the checks. The draft of one
# piece of writing planned by rule (the aggregator), and the plain_answer node, where an answer is no piece at all.
PLAIN_SYSTEM = "You are a helpful assistant. Reply to the user's request in full."

# Parts of the answer written alone under the grammar (the reviser node, nodes.revise.parts_messages): a list, the
# list's items held to the count asked, a title, a postscript; a program puts them in place.
PARTS_SYSTEM = """You write parts of the reply to the user's task, as JSON with the fields asked for. Take what they say from the answer below and keep it: the same points, facts and tone. Follow the task's other instructions."""
PARTS_USER = """Task: {task}

The answer so far:
{answer}

Write now, as JSON:
{parts}"""
PART_REQUESTS = {
    "items": '"items": the list the task asks for, {count} items, each one point of the answer written in full, '
             'without a bullet or a number in front',
    "title": '"title": a short title for the answer, without << >>',
    "postscript": '"postscript": a one- or two-sentence postscript that adds a last thought, without "{marker}"',
}

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

# The read_requirements node: the task's requirements about its answer, as a checklist under the grammar
# (schema.Checklist). Each item quotes the task first, so rules.checklist can keep only what the task bears out.
READ_REQUIREMENTS_SYSTEM = """You read a task and list the requirements it states about the form of its answer: length, the case of the letters, how many words are in all capital letters, words or letters to use or avoid, how the answer begins or ends, its parts (bullet points, numbered items, headings, highlighted parts, placeholders in square brackets, a title in << >>, a postscript), a format (JSON, the whole answer in double quotes, no commas), or the request copied word for word before the answer.
For each requirement give:
- quote: the task's own words that state it, copied exactly;
- kind: lowercase, uppercase, no_commas, word_count, sentence_count, bullet_count, numbered_count, heading_count, highlight_count, placeholder_count, title, postscript, starts_with, ends_with, forbidden_word, required_word, word_frequency, letter_frequency, caps_word_count, json, quoted or repeat_request;
- number: the count the task gives, if any;
- bound: "at least", "at most" or "exactly" for a count;
- text: the exact word, phrase, letter or marker it names, if any.
Only what the task says about the answer's form is a requirement, not its topic. A task that states none gets an empty list."""
READ_REQUIREMENTS_USER = "Task: {task}"
# One worked example, as an earlier chat turn (nodes.read_requirements).
READ_REQUIREMENTS_EXAMPLE = (
    "Write a short note to my neighbour about the noise last night, under 80 words and all in lowercase. Don't use "
    "the word 'sorry', mention the garden, and sign off with 'see you soon'.",
    {"requirements": [
        {"quote": "under 80 words", "kind": "word_count", "number": 80, "bound": "at most"},
        {"quote": "all in lowercase", "kind": "lowercase"},
        {"quote": "Don't use the word 'sorry'", "kind": "forbidden_word", "text": "sorry"},
        {"quote": "mention the garden", "kind": "required_word", "text": "garden"},
        {"quote": "sign off with 'see you soon'", "kind": "ends_with", "text": "see you soon"}]})

# The structured_answer node (build_graph's response_format): the settled answer as the caller's schema.
STRUCTURED_SYSTEM = """You write a finished answer as one JSON object that follows this JSON schema:
{schema}
Take every value from the answer: its numbers, names and lists as it states them. Where the answer leaves a field open, take it from the task or the notes. A number is a JSON number, without units or thousands separators. Reply with the JSON object only."""
STRUCTURED_USER = "Task: {task}\n\n{notes}The answer:\n{final}"
STRUCTURED_NOTES = "Notes from the work on it:\n{results}\n\n"
STRUCTURED_RETRY = "That JSON does not fit the schema: {error}\nWrite the whole JSON object again, corrected."

# A turn of a thread (hierplan run --thread), and a user's long-term memories: shown before the task wherever a
# prompt shows the task (nodes.context.asked); a run with neither keeps every prompt as it was.
CONVERSATION_HEADER = "Earlier in this conversation:"
CONVERSATION_LEFT_OUT = "({count} earlier turns not shown.)"
CONVERSATION_TURN = "Turn {turn}. The user asked: {task}\nYour answer: {final}"
CONVERSATION_FILES = "Files from that turn, which a Python step reads at ./data/NAME: {names}"
MEMORIES_HEADER = "What you remember about the user (from earlier conversations):"
MEMORY_LINE = "- {text}"
TASK_IN_CONVERSATION = "{conversation}\n\nThe user's request now (it may point back to the turns above): {task}"
