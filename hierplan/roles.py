"""The model roles, declared once: which nodes each role's model serves.

A graph runs on one chat model, or on one per role (``build_graph({"default": small, "planner": big})``, or
``--planner-model``, ``--executor-model``, ``--aggregator-model`` on the command line):

- ``planner``: the planner and the replanner (the plan and its revisions);
- ``executor``: python_step, llm_step, tool_step (a registered tool's arguments) and the checker (each step's
  work, and the programs that check a numeric answer);
- ``aggregator``: the aggregator, the reviser and structured_answer (the answer, its rewrites, and the answer as
  build_graph's response_format).

The nodes that call no model (memory, classify, whole_task_plan, tool_choice, approval, scheduler, vote, stated_answer,
answer_check, check_instructions) have no role. Importing this module imports nothing heavy.
"""

from __future__ import annotations

from typing import Any, Mapping

PLANNER, EXECUTOR, AGGREGATOR = "planner", "executor", "aggregator"
ROLES = (PLANNER, EXECUTOR, AGGREGATOR)
DEFAULT = "default"
"""The key of a role mapping's model for every role it does not name."""

NODES = {
    PLANNER: ("read_requirements", "planner", "replanner"),
    EXECUTOR: ("python_step", "llm_step", "tool_step", "checker"),
    AGGREGATOR: ("aggregator", "reviser", "plain_answer", "structured_answer"),
}
"""Each role's nodes (the graph's node names)."""


def option_name(role: str) -> str:
    """The RunOptions field (and, dashed, the CLI flag) that names a role's model: planner_model."""
    return f"{role}_model"


def role_models(model: Any) -> dict[str, Any] | None:
    """``build_graph``'s ``model`` as one chat model per role. ``model``: a chat model (every role's), a mapping
    of roles (and ``"default"``, for the roles it does not name) to chat models, or None (a graph that runs no
    node). A role mapped to None takes the default. An unknown key, or a mapping that leaves a role without a
    model, is a ValueError; anything but a LangChain BaseChatModel is a TypeError."""
    from langchain_core.language_models import BaseChatModel

    if model is None:
        return None
    if isinstance(model, Mapping):
        unknown = sorted(str(k) for k in model if k not in (*ROLES, DEFAULT))
        if unknown:
            raise ValueError(f"unknown model role {', '.join(map(repr, unknown))}: the roles are "
                             f"{', '.join(ROLES)} (and {DEFAULT!r} for the others)")
        given = {k: v for k, v in model.items() if v is not None}  # None: not given
        missing = [r for r in ROLES if r not in given and DEFAULT not in given]
        if missing:
            raise ValueError(f"no model for the role{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
                             f"name {'them' if len(missing) > 1 else 'it'}, or give a {DEFAULT!r} model")
    else:
        given = {DEFAULT: model}
    for key, chat in given.items():
        if not isinstance(chat, BaseChatModel):
            where = f"the {key} model" if isinstance(model, Mapping) else "model"
            raise TypeError(f"{where} must be a LangChain BaseChatModel, got {type(chat).__name__}")
    return {r: given.get(r, given.get(DEFAULT)) for r in ROLES}


def node_models(model: Any) -> dict[str, Any]:
    """Each model-calling node's model (its role's, by NODES), for ``model`` as role_models takes it (None:
    None for every node)."""
    models = role_models(model) or dict.fromkeys(ROLES)
    return {node: models[role] for role, nodes in NODES.items() for node in nodes}
