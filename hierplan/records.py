"""The run's records: TypedDicts of JSON-safe values, as the graph's state stores them.

Each record's fields are declared here and only here. The records that are validated or built by pydantic (a
plan and its steps, a step's result, its programs and model calls) have their pydantic classes made from these
declarations by hierplan.schema, which adds only what a TypedDict cannot say (bounds, defaults); the rest are
records written by one node each. They sit below the graph, the nodes, the rules and the tools, so that each of
those reads them without importing the graph (hierplan.graph.state builds the state from them), and they import
no pydantic (the rules never load it).
"""

from __future__ import annotations

from typing import Any, Literal

# typing_extensions' TypedDict: pydantic validates it on Python 3.11 too (typing's only from 3.12)
from typing_extensions import NotRequired, TypedDict

Tool = Literal["none", "llm", "python"]
"""The built-in tools (schema.Tool); a step may also name a tool registered with build_graph."""


class StepDict(TypedDict):
    """A planned step (schema.Step)."""

    id: int
    title: str
    instruction: str
    tool: Tool | str
    """A built-in tool, or a registered tool's name (a plan validated by schema.plan_models holds no other)."""
    expected_output: str
    depends_on: list[int] | None
    """Ids of earlier steps whose results this step needs; None: every earlier step."""
    tool_reason: str | None
    """Why the step has its tool (rules.tools, or a person's edit); None until the tool_choice node ran."""


class PlanDict(TypedDict):
    """The plan (schema.Plan)."""

    goal: str
    assumptions: list[str]
    steps: list[StepDict]


class PlanFailureDict(TypedDict):
    """A planner attempt that gave no valid plan."""

    source: str
    raw: str
    error: str


class CallDict(TypedDict):
    """One model call and what it cost (schema.ModelCall)."""

    node: str
    prompt_tokens: int | None
    generated_tokens: int | None
    seconds: float
    batch: int
    """How many prompts shared this call's generate pass (its seconds are the whole pass's)."""
    finish_reason: str | None
    """Why generation ended, as the model said: "stop", "length" ...; None when it did not say."""


class AttemptDict(TypedDict):
    """One program and what running it gave (schema.CodeAttempt)."""

    code: str
    ok: bool
    stdout: str
    error: str | None
    exit_reason: str | None
    mended: NotRequired[list[str]]
    """What rules.repair.mend changed in the model's program before this run of it, one line each (none: it ran
    as the model wrote it)."""


class VoteDict(TypedDict):
    """The vote on a numeric task's computed number (nodes.vote; rules.vote)."""

    kind: Literal["vote"]
    step_id: int
    """The plan's last Python step: the computation voted on."""
    answers: list[str | None]
    """What each program printed last, in order: the plan's step, then the whole-task programs (None: failed)."""
    chosen: str | None
    agreed: int
    programs: int
    changed: bool
    """Whether the kept number differs from the plan's."""
    decided: bool
    """False while no number has a majority and a tie-break may still be drawn."""
    decided_by: NotRequired[int]
    """Which program's number was kept: 0 the plan step's own, n the n-th whole-task program (``checks``)."""
    stdout: NotRequired[str]
    """What the kept program printed (the step's own record keeps what the step's program printed)."""


class FileDict(TypedDict):
    """One of the user's files, copied into the run's file store (hierplan.tools.files.load_files,
    hierplan.store.files): the state holds no bytes, only what finds them again (its sha256), so a resumed or
    forked run reads the same ones and a checkpoint costs the same whatever the file's size."""

    name: str
    """The file's name (no folders): ./data/NAME in a Python step's sandbox."""
    size: int
    sha256: str
    media_type: str
    preview: str
    """What the planner and the steps are shown (hierplan.tools.previews)."""


class ArtifactDict(TypedDict):
    """A file a Python step saved under out/ (hierplan.tools.files.collect_artifacts), its bytes in the run's file
    store by sha256, like the user's files."""

    name: str
    """Its path under out/ (``chart.png``, ``tables/sums.csv``)."""
    size: int
    sha256: str
    media_type: str


class ResultDict(TypedDict):
    """One executed step (schema.StepResult)."""

    step_id: int
    title: str
    tool: Tool | str
    """A built-in tool, or the registered tool's name."""
    output: str
    ok: bool
    error: str | None
    code: str | None
    stdout: str | None
    attempts: list[AttemptDict]
    calls: list[CallDict]
    check: VoteDict | None
    """The vote that checked this step's number, once decided (the last Python step of a numeric task): what each
    program printed, the number kept and how many agreed; None when the step was not checked."""
    seconds: float
    tool_args: dict[str, Any] | None
    """A registered tool's step: the arguments it was called with (None: never called)."""
    tool_result: Any
    """A registered tool's step: what the tool returned, JSON-safe (None when the call failed)."""
    artifacts: list[ArtifactDict]
    """A Python step's files saved under out/ by its kept program (new ones only: an earlier step's program, run
    again first, saves its own again)."""


class ReplanDict(TypedDict):
    """One revision after a failed step (nodes.replanner)."""

    failed_step: int
    error: str | None
    raw: str
    applied: bool
    parse_error: NotRequired[str]
    steps: NotRequired[list[StepDict]]
    """The steps that replaced the unfinished ones (when applied)."""


class AnswerCheckDict(TypedDict):
    """Does a numeric answer's last number equal the last computed one (rules.answer; nodes.answer_check)."""

    ok: bool
    answer_number: str | None
    computed: str
    step_id: int
    note: str
    other_unit: bool
    corrected: NotRequired[bool]


class InstructionRoundDict(TypedDict):
    """One round of the instruction check: fixed by program (attempt 0: repeated lines, case, commas, quotes, the
    ending, JSON) or written anew (attempt 1, 2, ...): by the reviser (kind "parts": only some parts, under the
    grammar), or the task answered plainly (kind "plain", the plain_answer node)."""

    attempt: int
    problems: list[str]
    kind: NotRequired[Literal["by_program", "parts", "plain"]]
    rejected: NotRequired[str]
    """Why this rewrite was not kept although it may break fewer instructions (rules.substance)."""


class InstructionCheckDict(TypedDict):
    """A writing answer against the task's checkable instructions (rules.instructions; nodes.revise)."""

    kind: Literal["instructions"]
    instructions: list[dict]
    """What was read from the task ({"kind": ..., ...} as rules.instructions.read_instructions gives them)."""
    draft: str
    """The aggregator's answer, before any change."""
    draft_problems: list[str]
    revisions: list[InstructionRoundDict]
    revised: bool
    """Whether the kept answer (``final``) differs from the draft."""
    problems: list[str]
    """What the kept answer still breaks."""
    to_fix: list[str]
    """What the next rewrite is asked to fix: the latest answer's problems (empty: nothing left to ask)."""
    ok: bool


class StructuredCheckDict(TypedDict):
    """The final answer expressed as build_graph's ``response_format`` (nodes.structured_answer): whether a reply
    validated against the schema, and each failed attempt's reason."""

    ok: bool
    schema: str
    """The schema's name (its ``title``, or the pydantic class's name)."""
    attempts: int
    errors: list[str]
    """Why each attempt that did not validate failed, in order (one line each)."""
    method: str | None
    """How the last reply was constrained ("grammar", "json_schema", ...); None: asked for in plain text."""
    error: str | None
    """One line when no reply validated (the run still ends, with its text answer); None when one did."""


class TurnDict(TypedDict):
    """An earlier turn of the conversation a run continues (``hierplan run --thread T``): what it was asked and
    answered, and the files it had and saved (records, their bytes in the file store by sha256)."""

    turn: int
    """1 for the thread's first run."""
    run_id: str
    task: str
    final: str
    """Its final answer as the run ended ("" when it ended without one, a rejected plan say)."""
    files: NotRequired[list[FileDict]]
    artifacts: NotRequired[list[ArtifactDict]]


class MemoryDict(TypedDict):
    """One long-term memory: what a user asked to be remembered, kept in the graph's store (LangGraph BaseStore)
    under ("memories", USER) and recalled by every later run of that user, whatever its thread."""

    key: str
    """Its key in the store (rules.conversation.memory_key: the same words, the same key)."""
    text: str
    run_id: NotRequired[str]
    """The run that asked for it."""
