"""Named limits and defaults, and where hierplan keeps its files."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

MAX_STEPS = 8
"""A plan has at most this many steps: the plan schema's bound (hierplan.schema), read by the rules too."""
MAX_INSTRUCTION_CHARS = 500
"""A step's instruction is at most this long: the plan schema's bound, read by the rules too (rules.plan)."""
MAX_GOAL_CHARS = 300
"""A plan's goal is at most this long: the plan schema's bound, read by the rules too (rules.plan)."""
BUILTIN_TOOLS: tuple[str, ...] = ("none", "llm", "python")
"""The tools every plan may name (schema.Tool), here so that code without pydantic reads them too."""

# Context handed to later nodes, as the original tutorial truncated it.
STEP_CONTEXT_CHARS = 1500
AGGREGATOR_CONTEXT_CHARS = 2500
# Steps see the task itself too (a model-written goal can drop the numbers a step needs).
TASK_CONTEXT_CHARS = 1500

# A thread's earlier turns, as a new turn's prompts show them (rules.conversation): the last CONVERSATION_TURNS
# turns, each task cut to TURN_TASK_CHARS and each answer to TURN_ANSWER_CHARS (a long answer keeps its head and its
# last line, where a final answer stands); older turns are named by count only. At most MEMORIES_SHOWN long-term
# memories, the newest first, each cut to MEMORY_CHARS.
CONVERSATION_TURNS = 6
TURN_TASK_CHARS = 400
TURN_ANSWER_CHARS = 600
MEMORIES_SHOWN = 20
MEMORY_CHARS = 300
DEFAULT_MEMORY_USER = "local"
"""Whose memories a run reads and writes when its ``user`` option names nobody."""

# Token budgets per node. The seed spent up to 650 + 700 per step + 900; a small model that has not stopped by
# these tighter caps is almost always repeating itself, and a step program rarely needs more than ~150 tokens.
# The planner's budget is set by the plan's schema, not the reverse: llama.cpp cannot close a plan's JSON early,
# so a plan schema is cut to the steps whose longest form fits the budget (models.remote.structured.server_schema),
# and this budget lets the longest draft plan of schema.MAX_STEPS steps fit (tests/test_planner.py checks it).
# A plan costs the tokens the model writes, not its budget.
PLANNER_MAX_NEW_TOKENS = 2300
READ_MAX_NEW_TOKENS = 400
"""The read_requirements node's checklist: up to schema.MAX_REQUIREMENTS short items."""
STEP_MAX_NEW_TOKENS = 400
CODE_MAX_NEW_TOKENS = 320
# A program that answers a question about the user's files reads the table, cleans it and prints several named
# values: it runs longer than one step's computation, and cut off at CODE_MAX_NEW_TOKENS it does not parse.
DATA_CODE_MAX_NEW_TOKENS = 512
AGGREGATOR_MAX_NEW_TOKENS = 600
STRUCTURED_MAX_NEW_TOKENS = 600
"""The structured_answer node's JSON (build_graph's response_format); the run's --max-new-tokens replaces it."""

# LangGraph's recursion limit counts supersteps: planner + steps + checks + aggregator + revisions, with room.
RECURSION_LIMIT = 64

# Bounded loops of the graph (each a drawn edge back).
MAX_CODE_REPAIRS = 2
"""Repairs after a Python step's first attempt: the failure is shown to the model with its code."""
MAX_REPLANS = 1
"""Revisions of the unfinished steps after a failed step."""
MAX_MENDS = 3
"""Fixes by rule (rules.repair.mend: an import, a file's path, a column's spelling) made to one program before it
counts as failed: each fixes one failure, and a program can have several."""
MAX_TIE_BREAKS = 2
"""Whole-task programs drawn after the first check while no number has a majority (nodes.vote)."""
MAX_REVISIONS = 2
"""Rounds in which the model writes an answer that breaks the task's checkable instructions again, whole or in
parts (nodes.revise)."""
# A list to be written again under the grammar (nodes.revise) holds at most this many items; a longer one is
# rewritten as free text.
MAX_GRAMMAR_LIST_ITEMS = 20
# For fitting a schema's longest answer into max_tokens (a plan's steps, the parts the reviser asks for): English
# text runs 3-4 characters a token, digits and JSON punctuation fewer; 3 keeps most answers whole without cutting
# plans to nothing.
CHARS_PER_TOKEN = 3
STRUCTURED_RETRIES = 1
"""Asks again for the answer as the response_format's schema after a reply that did not validate, shown why."""
STRUCTURED_NOTE_CHARS = 1200
"""Each step's output shown with the answer when it is put into the schema (nodes.structured_answer)."""

# Registered tools (build_graph's ``tools``, MCP servers' tools): nodes/tool_step.py, tools/registered.py, tools/mcp.py.
TOOL_TIMEOUT_S = 60.0
"""One tool call's limit; a call still running then is a failed step (an async tool's call is cancelled; an MCP
server's session stays open)."""
TOOL_CANCEL_GRACE_S = 5.0
"""After the limit: how long a cancelled call may take to end before the step is failed anyway."""
TOOL_RESULT_CHARS = 20_000
"""A tool's result kept with the step (checkpointed with every later state): longer ones are kept as truncated
text."""
TOOL_DESCRIPTION_CHARS = 400
"""What the planner and the argument request show of a tool's description (an MCP server's may be pages long)."""
MCP_LOAD_TIMEOUT_S = 60.0
"""Opening an MCP server's session and listing its tools at the start of a run (a stdio server's start
included), and opening it again after it broke."""
MCP_CLOSE_TIMEOUT_S = 10.0
"""Ending the MCP servers' sessions when a run ends: a stdio server busy in a call gets about 4 s from the
adapters' client (stdin closed, then SIGTERM, then SIGKILL); one still there after this is cancelled, and the
parent-death signal ends its process."""

# Files in (``--file``, the input's ``files``) and artifacts out (what a Python step saves under ``out/``):
# hierplan/tools/files.py. Their bytes live once, by sha256, in the run database's file store
# (hierplan/store/files.py); the checkpointed state holds only each file's name, size, sha256, media type and
# preview, so a file's size costs nothing per checkpoint and the limits are sized for real data sets.
MiB = 1024 * 1024
FILE_MAX_BYTES = 1024 * MiB
"""One input file, unless the run says otherwise (``--max-file-mb``, $HIERPLAN_MAX_FILE_MB)."""
FILES_MAX_BYTES = 4096 * MiB
"""A run's input files together, unless the run says otherwise (``--max-files-mb``, $HIERPLAN_MAX_FILES_MB)."""
MAX_FILE_ENV = "HIERPLAN_MAX_FILE_MB"
MAX_FILES_ENV = "HIERPLAN_MAX_FILES_MB"
ARTIFACT_MAX_BYTES = 64 * MiB
"""One file a Python step saves under out/ (the sandbox's own largest written file, SandboxLimits.file_size); a
larger one is left out, and said so in the step's output."""
ARTIFACTS_MAX_BYTES = 256 * MiB
"""Everything a run's Python steps save under out/, together."""
FILE_STORE_CHUNK_BYTES = 1 * MiB
"""Files are copied into and out of the store, and hashed, this much at a time (never read whole)."""
PG_FILE_CHUNK_BYTES = 4 * MiB
"""A Postgres file store keeps a file as rows of this many bytes (bytea) each."""
FILE_CACHE_ENV = "HIERPLAN_FILE_CACHE"
"""Where a Postgres file store's files are read back to on this machine (default: file_cache_dir())."""
SANDBOX_DATA_DIR = "data"
"""Where a Python step finds the run's files, read-only: ./data/NAME in its working (scratch) directory."""
SANDBOX_OUTPUT_DIR = "out"
"""Where a Python step saves what is kept with the run: ./out/ in its working directory."""
FILE_PREVIEW_ROWS = 3
"""A table's first rows, or a text's first lines, shown to the planner and the steps."""
FILE_PREVIEW_CHARS = 1200
"""One file's preview in a prompt, at most."""
FILE_PREVIEW_LINE_CHARS = 240
"""One line of a preview (a table's row, a text's line), at most: a wide table still shows its three rows."""
FILE_PREVIEW_CHUNK_CELLS = 500_000
"""A CSV is counted (rows, missing values) in chunks of about this many cells: bounded memory at any size."""
JSON_PREVIEW_MAX_BYTES = 64 * MiB
"""A JSON document up to this size is parsed for its preview; a larger one is previewed by its first lines."""
JSON_PREVIEW_DEPTH = 3
"""A JSON preview names the keys of objects inside fewer containers than this (the document itself is inside 0): a
list of records inside an object is the usual JSON table, and a program reading it needs the records' fields."""
JSON_PREVIEW_KEYS = 12
"""A JSON preview names at most this many keys of an object."""

# Two written numbers within this are the same number.
NUMBER_TOLERANCE = Decimal("1e-6")
# An answer that states the computed value times or divided by one of these says the same quantity in another
# unit (cents and dollars, grams and kilograms, minutes and hours) and is not corrected.
UNIT_FACTORS = (10, 100, 1000, 60, 3600)

# Instructions a task states about its answer (rules.instructions).
REPEAT_MIN_WORDS = 5
"""A line of at least this many words said twice is a repeat (a small model copies its notes' blocks again)."""
REPEAT_LOOP_LINES = 4
"""A shorter line said this many times is a loop (a small model stuck on "- hello" until its token limit)."""
LOOP_MIN_REPEATS = 4
LOOP_MIN_WORDS = 12
LOOP_MAX_SPAN = 48
"""The same 1 to LOOP_MAX_SPAN words said LOOP_MIN_REPEATS times or more in a row, LOOP_MIN_WORDS words in all, is a
loop a program cuts to its first round ("Jiang Zhi, Jiang Zhi, Jiang Zhi, ..."); "Let it snow! Let it snow! Let it
snow!" is not."""
LOOP_CHECK_WORDS = 60
LOOP_NEW_SHARE = 0.5
"""An answer of LOOP_CHECK_WORDS words or more of which fewer than this share say something new (start a word
4-gram not said before) goes round in circles."""
LANGUAGE_MIN_WORDS = 20
LANGUAGE_LINE_WORDS = 4
LANGUAGE_MIN_SHARE = 0.2
"""An answer's language is checked only on its prose lines of LANGUAGE_LINE_WORDS words or more, and only when they
hold LANGUAGE_MIN_WORDS words (on a line or two, or a list of names, langdetect guesses); it is another language
only where langdetect gives the one asked for under LANGUAGE_MIN_SHARE."""
MIN_LIST_ITEMS = 3
"""A checklist or list asked for with no count given still has at least this many items."""
SHORTEN_TO = 0.75
WORDS_PER_SENTENCE = 15
"""Asked to shorten, the model is told to aim this far under the limit, in sentences of about this many words."""
MIN_TOPIC_WORDS = 3
TOPIC_SHARE = 2 / 3
"""A thing to mention of MIN_TOPIC_WORDS words or more (a topic read from "cover ..., keeping trash in the bin") is
mentioned by its last word and this share of its words; a shorter one (a name) only whole."""

# Sampling temperatures beside each node's own (Sampling below). A repair, a tie-break program and a second
# rewrite sample at least this warm: at the node's 0.2 the small model mostly sends back what it sent before.
WARM_TEMPERATURE = 0.7
# The planner's stricter retry: greedy, as the original tutorial's was.
RETRY_TEMPERATURE = 0.0


@dataclass(frozen=True)
class Sampling:
    """Sampling for one kind of node. Defaults are the original tutorial's."""

    temperature: float = 0.2
    top_p: float = 0.9
    repetition_penalty: float = 1.05
    max_new_tokens: int = STEP_MAX_NEW_TOKENS
    min_new_tokens: int | None = None
    """Forces answer length; for benchmarks that compare equal token counts."""

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0


@dataclass(frozen=True)
class SamplingConfig:
    """Per-node sampling: 0.2 for planner, code and aggregator, 0.3 for LLM steps."""

    planner: Sampling = Sampling(temperature=0.2, max_new_tokens=PLANNER_MAX_NEW_TOKENS)
    code: Sampling = Sampling(temperature=0.2, max_new_tokens=CODE_MAX_NEW_TOKENS)
    data_code: Sampling = Sampling(temperature=0.2, max_new_tokens=DATA_CODE_MAX_NEW_TOKENS)
    """A program's when the run has the user's files (a Python step's and the checker's)."""
    llm_step: Sampling = Sampling(temperature=0.3, max_new_tokens=STEP_MAX_NEW_TOKENS)
    aggregator: Sampling = Sampling(temperature=0.2, max_new_tokens=AGGREGATOR_MAX_NEW_TOKENS)
    seed: int | None = None

    def code_for(self, files: bool) -> Sampling:
        """A program's sampling: ``data_code`` when the run has the user's files, else ``code``."""
        return self.data_code if files else self.code

    def with_overrides(self, *, temperature: float | None = None, top_p: float | None = None,
                       max_new_tokens: int | None = None, seed: int | None = None) -> "SamplingConfig":
        """Apply one CLI-level override to every node (None leaves a field as it is)."""

        def adjust(s: Sampling) -> Sampling:
            changes = {k: v for k, v in (("temperature", temperature), ("top_p", top_p),
                                         ("max_new_tokens", max_new_tokens)) if v is not None}
            return replace(s, **changes)

        return SamplingConfig(
            planner=adjust(self.planner), code=adjust(self.code), data_code=adjust(self.data_code),
            llm_step=adjust(self.llm_step), aggregator=adjust(self.aggregator),
            seed=self.seed if seed is None else seed,
        )


def state_dir() -> Path:
    """Where runs are kept: $HIERPLAN_STATE_DIR, else $XDG_STATE_HOME/hierplan, else ~/.local/state/hierplan."""
    if env := os.environ.get("HIERPLAN_STATE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "hierplan"


def file_cache_dir() -> Path:
    """Where files from a Postgres file store are read back to: $HIERPLAN_FILE_CACHE, else
    $XDG_CACHE_HOME/hierplan/files, else ~/.cache/hierplan/files."""
    if env := os.environ.get(FILE_CACHE_ENV, "").strip():
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "hierplan" / "files"


def default_db_path() -> str:
    """$HIERPLAN_DB, else runs.sqlite in the state directory."""
    return os.environ.get("HIERPLAN_DB") or str(state_dir() / "runs.sqlite")

# The terminal's live view of a run (hierplan/cli/output.py): under the progress line, the last lines of each
# step's text as the model writes it.
PREVIEW_LINES = 4
