"""The models a run's options name (one, or one per role: hierplan.roles), and what a loaded model says of
itself. The graph itself is compiled by hierplan.graph.builder.build_graph, the one function every entry point
compiles the agent with."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from hierplan.errors import UsageError
from hierplan.options import RunOptions
from hierplan.roles import EXECUTOR, ROLES, option_name

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

ModelLoader = Callable[[RunOptions], "BaseChatModel"]
ModelsLoader = Callable[[RunOptions], "Mapping[str, BaseChatModel]"]
"""Each role's chat model (hierplan.roles) for a run's options."""
ToolLoader = Callable[[RunOptions], "list[BaseTool]"]


def load_model(options: RunOptions) -> BaseChatModel:
    """The chat model the options name; only the model options given are passed on (the loader has its own
    defaults and environment variables)."""
    import hierplan.models  # looked up at call time: tests replace hierplan.models.load_chat_model

    model, kwargs = _load_arguments(options)
    return hierplan.models.load_chat_model(model, **kwargs)


def _load_arguments(options: RunOptions) -> tuple[str | None, dict[str, Any]]:
    roles = {option_name(r) for r in ROLES}
    kwargs = {k: v for k, v in options.load_options().items() if k not in roles}
    return kwargs.pop("model", None), kwargs


def check_models(options: RunOptions) -> None:
    """Before a run starts: the engine of each model the options name is installed (hierplan.models.check_installed),
    else one line naming the extra to install; nothing loads."""
    from hierplan.models import check_installed

    for role_opts in role_options(options).values():
        model, kwargs = _load_arguments(role_opts)
        check_installed(model, **kwargs)


def role_options(options: RunOptions) -> dict[str, RunOptions]:
    """Each role's model options (hierplan.roles): the run's, with the role's model as ``model`` and no role
    options. Where a run mixes local and remote (``openai:NAME``) models, ``base_url`` goes to the remote ones
    only and ``engine`` to the local ones only; otherwise each gets every option, as a single model would."""
    from hierplan.models import is_remote  # light: the engines load with a model

    names = {role: options.role_model(role) for role in ROLES}
    cleared = replace(options, **{option_name(r): None for r in ROLES})
    mixed = len({is_remote(n) for n in names.values()}) > 1
    each = {}
    for role, name in names.items():
        drop = ({"engine": None} if is_remote(name) else {"base_url": None}) if mixed else {}
        each[role] = replace(cleared, model=name, **drop)
    return each


def load_models(options: RunOptions, load: ModelLoader = load_model) -> dict[str, BaseChatModel]:
    """One chat model per role, by ``load`` (load_model, or a caller's): each distinct model once, in the roles'
    order (planner, executor, aggregator), so roles that name the same model share it."""
    loaded: dict[str, BaseChatModel] = {}
    models = {}
    for role, role_opts in role_options(options).items():
        key = json.dumps(role_opts.load_options(), sort_keys=True)
        if key not in loaded:
            loaded[key] = load(role_opts)
        models[role] = loaded[key]
    return models


def model_info(model: Any) -> dict[str, Any] | None:
    """Name, engine, quantization and device of a loaded chat model, as it records them (None for one that
    does not)."""
    info = (getattr(model, "metadata", None) or {}).get("hierplan_model") or {}
    brief = {k: info.get(k) for k in ("name", "engine", "quantization", "device") if info.get(k) is not None}
    return brief or None


def models_info(models: Mapping[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """What a run records of its role models: (the executor's model_info, each role's where they differ, else
    None)."""
    infos = {role: model_info(models[role]) for role in ROLES}
    differ = len({json.dumps(i, sort_keys=True) for i in infos.values()}) > 1
    return infos[EXECUTOR], (infos if differ else None)


def load_tools(options: RunOptions) -> list[BaseTool]:
    """The registered tools the options name: the MCP servers' of ``mcp`` (those ``mcp_servers`` chooses, by name;
    none without ``mcp``), whose sessions stay open until close_tools. A bad file, a name it does not have, or a
    server that gives no tools is one UsageError line."""
    if not options.mcp:
        if options.mcp_servers:
            raise UsageError(f"mcp_servers {options.mcp_servers!r} names servers of the host's MCP file, and none "
                             "is configured (hierplan run/ui/serve --mcp FILE)")
        return []
    from hierplan.tools.mcp import load_tools as mcp_tools

    return mcp_tools(options.mcp, options.mcp_servers)


def close_tools(tools: Any) -> None:
    """End what loaded tools hold open: load_tools' MCP tools (hierplan.tools.mcp.McpTools) their servers'
    sessions and processes; a plain list of tools holds nothing."""
    close = getattr(tools, "close", None)
    if callable(close):
        close()


def with_absolute_paths(options: RunOptions) -> RunOptions:
    """The options with ``mcp`` as an absolute path: a run is resumed from anywhere."""
    if not options.mcp:
        return options
    return replace(options, mcp=str(Path(options.mcp).expanduser().resolve()))
