"""The plan and step-result models, and the class of a caller's schema (build_graph's ``response_format``, a
registered tool's JSON-schema arguments). State stores their ``model_dump(mode="json")`` dicts (JSON-safe): the
records of hierplan.records, whose fields declare the models of them here (record_model)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import (BaseModel, ConfigDict, Field, StringConstraints, ValidationError, conlist, create_model,
                      model_validator)
from pydantic.json_schema import SkipJsonSchema

# there, read without pydantic too
from hierplan.config import BUILTIN_TOOLS, MAX_GOAL_CHARS, MAX_INSTRUCTION_CHARS, MAX_STEPS
from hierplan.records import AttemptDict, CallDict, PlanDict, ResultDict, StepDict

# A plan has as many steps as its task needs: one for a question one program answers, 3 to 8 for a task with
# distinct parts (the planner's guidance, prompts.PLANNER_SYSTEM). The schema allows 1..MAX_STEPS (config).
MIN_STEPS = 1
# Bounds keep a small model from rambling into max_new_tokens while writing a plan.
MAX_ASSUMPTIONS = 6
MAX_ASSUMPTION_CHARS = 200
MAX_TITLE_CHARS = 80
MAX_EXPECTED_CHARS = 240

Tool = Literal[BUILTIN_TOOLS]  # type: ignore[valid-type]
"""The tools every plan may name; a graph built with registered tools (build_graph's ``tools``) also takes
their names (plan_models)."""
# constrained: the local grammar; json_schema | json_object | tool_calling: constrained by a model server; rule: written
# by rules.plan without a model (a question one program answers).
PlanSource = Literal["model", "retry", "fallback", "constrained", "json_schema", "json_object", "tool_calling",
                     "edited", "rule"]
MAX_REVISED_STEPS = 4


def record_model(record: type, name: str, fields: Mapping[str, Any] | None = None, *,
                 base: type[BaseModel] | None = None, doc: str | None = None,
                 validators: Mapping[str, Any] | None = None) -> Any:
    """The pydantic class that validates and builds ``record`` (a TypedDict of hierplan.records), whose fields are
    declared there only: each of the record's fields, in its order and of its type, with what a TypedDict cannot
    say given by name in ``fields``: a FieldInfo (bounds, a default, a description) keeps the record's type; a
    (type, FieldInfo) pair validates another (a nested record's class, the tools a plan may name). With a ``base``
    made from the same record, only the fields named are declared again (a draft's tighter bounds). ``doc`` is the
    class's docstring: the JSON schema's description."""
    fields = dict(fields or {})
    hints = get_type_hints(record)
    if unknown := sorted(set(fields) - set(hints)):
        raise TypeError(f"{record.__name__} has no field {', '.join(unknown)}")

    def declared(field: str) -> Any:
        given = fields.get(field, ...)
        return given if isinstance(given, tuple) else (hints[field], given)

    names = list(fields) if base is not None else list(hints)
    # No config: pydantic's default ignores a key the record does not declare (a model's extra key in a plan).
    return create_model(name, __base__=base, __doc__=doc, __validators__=validators,  # type: ignore[call-overload]
                        **{field: declared(field) for field in names})


def _plan_in_order(plan: Any) -> Any:
    """Plan's whole-plan check: ids 1..n in order, each dependency an earlier step, assumptions within bounds."""
    for index, step in enumerate(plan.steps, start=1):
        if step.id != index:
            raise ValueError(f"step ids must be 1..{len(plan.steps)} in order; got {step.id} at position {index}")
        for dep in step.depends_on or []:
            if not 1 <= dep < step.id:
                raise ValueError(f"step {step.id} depends on {dep}, which is not an earlier step")
    for text in plan.assumptions:
        if len(text) > MAX_ASSUMPTION_CHARS:
            raise ValueError(f"assumption longer than {MAX_ASSUMPTION_CHARS} characters")
    return plan


Step = record_model(StepDict, "Step", {
    "id": Field(ge=1, le=MAX_STEPS),
    "title": Field(min_length=1, max_length=MAX_TITLE_CHARS),
    "instruction": Field(min_length=1, max_length=MAX_INSTRUCTION_CHARS),
    "tool": (Tool, ...),  # the built-in tools only: plan_models makes the classes that take registered ones
    "expected_output": Field(default="", max_length=MAX_EXPECTED_CHARS),
    "depends_on": Field(default=None, description="Ids of earlier steps whose results this step needs; null "
                                                  "means all earlier steps."),
    # Left out of the JSON schema, so neither the plan grammar nor a server-side schema asks the model to write it.
    "tool_reason": (SkipJsonSchema[str | None], Field(default=None, max_length=MAX_EXPECTED_CHARS)),
})

Plan = record_model(PlanDict, "Plan", {
    "goal": Field(min_length=1, max_length=MAX_GOAL_CHARS),
    "assumptions": Field(default_factory=list, max_length=MAX_ASSUMPTIONS),
    "steps": (list[Step], Field(min_length=MIN_STEPS, max_length=MAX_STEPS)),  # type: ignore[valid-type]
}, validators={"_ids_in_order": model_validator(mode="after")(_plan_in_order)})


class Revision(BaseModel):
    """What the replanner asks the model for: the steps that replace the unfinished ones."""

    model_config = ConfigDict(extra="ignore")

    steps: list[Step] = Field(min_length=1, max_length=MAX_REVISED_STEPS)

    @model_validator(mode="after")
    def _ids_in_order(self) -> "Revision":
        for index, step in enumerate(self.steps, start=1):
            if step.id != index:
                raise ValueError(f"step ids must be 1..{len(self.steps)} in order")
        return self


# What the model is asked to write is bounded tighter than what a plan may hold (a user's edit may be long):
# a 135M model fills whatever room a string gives it, repeating itself until the bound.
DRAFT_GOAL_CHARS = 150
DRAFT_ASSUMPTIONS = 3
DRAFT_ASSUMPTION_CHARS = 120
DRAFT_TITLE_CHARS = 60
DRAFT_INSTRUCTION_CHARS = 200
DRAFT_EXPECTED_CHARS = 100


DraftStep = record_model(StepDict, "DraftStep", {
    "title": Field(min_length=1, max_length=DRAFT_TITLE_CHARS),
    "instruction": Field(min_length=1, max_length=DRAFT_INSTRUCTION_CHARS),
    "expected_output": Field(default="", max_length=DRAFT_EXPECTED_CHARS),
}, base=Step)

DraftPlan = record_model(PlanDict, "DraftPlan", {
    "goal": Field(min_length=1, max_length=DRAFT_GOAL_CHARS),
    "assumptions": (list[Annotated[str, Field(max_length=DRAFT_ASSUMPTION_CHARS)]],
                    Field(default_factory=list, max_length=DRAFT_ASSUMPTIONS)),
    "steps": (list[DraftStep], Field(min_length=MIN_STEPS, max_length=MAX_STEPS)),  # type: ignore[valid-type]
}, base=Plan, doc="The grammar-constrained planner writes this; every match is also a valid Plan.")


class DraftRevision(Revision):
    steps: list[DraftStep] = Field(min_length=1, max_length=MAX_REVISED_STEPS)


@dataclass(frozen=True)
class PlanModels:
    """The plan models for one set of registered tools: what the planner and replanner are constrained to and
    what a plan (a person's edit included) is validated with."""

    plan: type[Plan]
    draft: type[DraftPlan]
    revision: type[Revision]
    draft_revision: type[DraftRevision]
    tools: tuple[str, ...]
    """The registered tools' names (the built-in ones not included)."""


@cache
def plan_models(tools: tuple[str, ...] = ()) -> PlanModels:
    """The plan models whose steps may name the built-in tools and ``tools``: the same classes as above,
    with the step's ``tool`` enum extended, so the local grammar and a server-side schema list the names
    (every other part of the JSON schema is unchanged). No tools: the classes above themselves."""
    if not tools:
        return PlanModels(Plan, DraftPlan, Revision, DraftRevision, ())
    check_tool_names(tools)
    tool_type = Literal[(*BUILTIN_TOOLS, *tools)]  # type: ignore[valid-type]
    step = create_model("Step", __base__=Step, __doc__=Step.__doc__, tool=(tool_type, ...))
    draft_step = create_model("DraftStep", __base__=DraftStep, __doc__=DraftStep.__doc__, tool=(tool_type, ...))

    def steps(item: type, lo: int, hi: int) -> Any:
        return (list[item], Field(min_length=lo, max_length=hi))  # type: ignore[valid-type]

    return PlanModels(
        plan=create_model("Plan", __base__=Plan, __doc__=Plan.__doc__, steps=steps(step, MIN_STEPS, MAX_STEPS)),
        draft=create_model("DraftPlan", __base__=DraftPlan, __doc__=DraftPlan.__doc__,
                           steps=steps(draft_step, MIN_STEPS, MAX_STEPS)),
        revision=create_model("Revision", __base__=Revision, __doc__=Revision.__doc__,
                              steps=steps(step, 1, MAX_REVISED_STEPS)),
        draft_revision=create_model("DraftRevision", __base__=DraftRevision, __doc__=DraftRevision.__doc__,
                                    steps=steps(draft_step, 1, MAX_REVISED_STEPS)),
        tools=tools)


def check_tool_names(names: Any) -> None:
    """Registered tools' names: each a non-empty string, none twice, none a built-in tool's (ValueError)."""
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a tool's name must be a non-empty string, got {name!r}")
        if name in BUILTIN_TOOLS:
            raise ValueError(f"a tool may not be named {name!r}: the plan's own tools are {', '.join(BUILTIN_TOOLS)}")
        if name in seen:
            raise ValueError(f"two tools are named {name!r}")
        seen.add(name)


def short_error(exc: Exception) -> str:
    """Why a plan (or revision) is invalid, in one line: up to five "field.path: message" parts.

    One format for the planner's failures, the replanner's parse_error and a person's edited plan."""
    if isinstance(exc, ValidationError):
        # A whole-plan check (step order, JSON syntax) has no field path: its message says enough.
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" if e["loc"] else e["msg"]
                         for e in exc.errors()[:5])
    return str(exc)


ModelCall = record_model(CallDict, "ModelCall", {
    "prompt_tokens": Field(default=None), "generated_tokens": Field(default=None), "batch": Field(default=1),
    "finish_reason": Field(default=None)}, doc="One model call: what it cost.")

CodeAttempt = record_model(AttemptDict, "CodeAttempt", {
    "stdout": Field(default=""), "error": Field(default=None), "exit_reason": Field(default=None),
    "mended": Field(default_factory=list)},
    doc="One attempt of a Python step: the code and what running it gave.")

# Built with the attempts' and calls' classes (what the nodes hold), stored as their records.
StepResult = record_model(ResultDict, "StepResult", {
    "error": Field(default=None), "code": Field(default=None), "stdout": Field(default=None),
    "attempts": (list[CodeAttempt], Field(default_factory=list)),  # type: ignore[valid-type]
    "calls": (list[ModelCall], Field(default_factory=list)),  # type: ignore[valid-type]
    "check": Field(default=None), "seconds": Field(default=0.0), "tool_args": Field(default=None),
    "tool_result": Field(default=None), "artifacts": Field(default_factory=list)})


# The requirement kinds the model may read from a task (rules.checklist maps each to a checker's instruction).
RequirementKind = Literal[
    "lowercase", "uppercase", "no_commas", "word_count", "sentence_count", "bullet_count", "numbered_count",
    "heading_count", "highlight_count", "placeholder_count", "title", "postscript", "starts_with", "ends_with",
    "forbidden_word", "required_word", "word_frequency", "letter_frequency", "caps_word_count", "json", "quoted",
    "repeat_request"]
Bound = Literal["at least", "at most", "exactly"]
MAX_REQUIREMENTS = 6
MAX_QUOTE_CHARS = 160
MAX_REQUIREMENT_TEXT_CHARS = 120


class Requirement(BaseModel):
    """One requirement about the answer, as the model read it: the task's own words first (``quote``), so that
    what it claims can be checked against the task (rules.checklist.grounded)."""

    model_config = ConfigDict(extra="ignore")

    quote: str = Field(min_length=1, max_length=MAX_QUOTE_CHARS)
    kind: RequirementKind
    number: int | None = Field(default=None, ge=0, le=10_000)
    bound: Bound | None = None
    text: str | None = Field(default=None, max_length=MAX_REQUIREMENT_TEXT_CHARS)


class Checklist(BaseModel):
    """What the read_requirements node asks the model for, under the grammar."""

    model_config = ConfigDict(extra="ignore")

    requirements: list[Requirement] = Field(default_factory=list, max_length=MAX_REQUIREMENTS)


MIN_ITEM_CHARS = 3
MAX_TITLE_PART_CHARS = 80
MAX_POSTSCRIPT_CHARS = 300


BODY_SHARE = 0.8
"""Of the reply's characters, the share the list's items may take together."""


def parts_model(parts: list[dict[str, Any]], budget_chars: int) -> type[BaseModel]:
    """What the reviser asks for when the answer misses a count or lacks a part (rules.parts.parts_to_write): an
    object with, for each part, ``items`` (a list) held to the count asked, a ``title`` or a ``postscript``; the grammar holds the model to it. Each item is at most its share of
    ``budget_chars`` (the call's token budget in characters), so the JSON closes before the budget ends: cut off,
    it would not validate."""
    from hierplan.rules.parts import part_count

    fields: dict[str, Any] = {}
    for part in parts:
        kind = part["kind"]
        if kind == "title":
            fields["title"] = (Annotated[str, StringConstraints(min_length=MIN_ITEM_CHARS,
                                                                max_length=MAX_TITLE_PART_CHARS)], ...)
        elif kind == "postscript":
            fields["postscript"] = (Annotated[str, StringConstraints(min_length=MIN_ITEM_CHARS,
                                                                     max_length=MAX_POSTSCRIPT_CHARS)], ...)
        else:
            least, most = part_count(part)
            longest = max(2 * MIN_ITEM_CHARS, int(budget_chars * BODY_SHARE / most))
            fields["items"] = (conlist(Annotated[str, StringConstraints(min_length=MIN_ITEM_CHARS,
                                                                         max_length=longest)],
                                       min_length=least, max_length=most), ...)
    return create_model("AnswerParts", **fields)


# --- a caller's schema: build_graph's response_format, a registered tool's JSON-schema arguments ------------------

def json_schema_model(name: str, schema: dict[str, Any], description: str = "") -> type[BaseModel]:
    """A pydantic class for a JSON Schema of an object: its JSON schema is ``schema`` itself (what the grammar or a
    server constrains to) and its validation checks the data against it with ``jsonschema``, where installed (a
    registered tool, which checks its arguments again, works without it; check_response_format requires it).
    The validated data is kept as given: ``model_dump()`` returns it."""
    schema = copy.deepcopy(schema)
    try:
        from jsonschema import validators
    except ImportError:
        check = None
    else:
        check = validators.validator_for(schema)(schema)

    class Object(BaseModel):
        model_config = ConfigDict(extra="allow")

        @model_validator(mode="before")
        @classmethod
        def _valid(cls, data: Any) -> Any:
            if not isinstance(data, dict):
                raise ValueError(f"expected a JSON object, got {type(data).__name__}")
            if check is not None:
                error = next(iter(sorted(check.iter_errors(data), key=lambda e: list(e.path))), None)
                if error is not None:
                    where = ".".join(map(str, error.path))
                    raise ValueError(f"{where}: {error.message}" if where else error.message)
            return data

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return copy.deepcopy(schema)

    # A remote server names the JSON schema it constrains to after the class: letters, digits, _ and - only.
    Object.__name__ = Object.__qualname__ = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "Object"
    Object.__doc__ = description
    return Object


RESPONSE_NAME = "StructuredResponse"
"""A response_format JSON Schema's name where it has no ``title``."""


def check_response_format(response_format: Any) -> Any:
    """build_graph's ``response_format`` as given, checked: a pydantic class, or a JSON Schema (a dict) of an
    object that is a valid schema of its draft. A ValueError (TypeError for anything else) says what is wrong, in
    one line. Without ``jsonschema`` a JSON Schema cannot be checked (nor the answers validated): a ValueError."""
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        return response_format
    if not isinstance(response_format, dict):
        raise TypeError(f"response_format must be a pydantic class or a JSON Schema (a dict), "
                        f"got {type(response_format).__name__}")
    try:
        from jsonschema import SchemaError, validators
    except ImportError:
        raise ValueError("a JSON Schema response_format needs the jsonschema package (pip install jsonschema)") \
            from None
    try:
        validators.validator_for(response_format).check_schema(response_format)
    except SchemaError as exc:
        where = "/".join(map(str, exc.path))
        raise ValueError(f"not a valid JSON Schema{f' at {where}' if where else ''}: {exc.message}") from None
    if response_format.get("type") != "object":
        raise ValueError('the schema must describe a JSON object ("type": "object" at its root), got '
                         f"{json.dumps(response_format.get('type'))}")
    return response_format


def response_model(response_format: Any) -> type[BaseModel]:
    """The pydantic class a final answer is asked for and validated with: a pydantic class as it is, a JSON Schema
    as json_schema_model's class (named by its ``title``)."""
    response_format = check_response_format(response_format)
    if isinstance(response_format, dict):
        return json_schema_model(str(response_format.get("title") or RESPONSE_NAME), response_format,
                                 str(response_format.get("description") or ""))
    return response_format


def response_dump(parsed: BaseModel) -> dict[str, Any]:
    """A validated answer as state keeps it: JSON-safe, its keys as the schema names them (aliases)."""
    return parsed.model_dump(mode="json", by_alias=True)
