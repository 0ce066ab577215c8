"""The model a run's options name, and what a loaded model says of itself. The graph itself is compiled by
hierplan.graph.builder.build_graph, the one function every entry point compiles the agent with."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from hierplan.options import RunOptions

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

ModelLoader = Callable[[RunOptions], "BaseChatModel"]
ToolLoader = Callable[[RunOptions], "list[BaseTool]"]


def load_model(options: RunOptions) -> BaseChatModel:
    """The chat model the options name; only the model options given are passed on (the loader has its own
    defaults and environment variables)."""
    import hierplan.models  # looked up at call time: tests replace hierplan.models.load_chat_model

    kwargs = options.load_options()
    return hierplan.models.load_chat_model(kwargs.pop("model", None), **kwargs)


def model_info(model: Any) -> dict[str, Any] | None:
    """Name, engine, quantization and device of a loaded chat model, as it records them (None for one that
    does not)."""
    info = (getattr(model, "metadata", None) or {}).get("hierplan_model") or {}
    brief = {k: info.get(k) for k in ("name", "engine", "quantization", "device") if info.get(k) is not None}
    return brief or None


def load_tools(options: RunOptions) -> list[BaseTool]:
    """The registered tools the options name: the MCP servers' of ``mcp`` (none without it). A bad file or a
    server that gives no tools is one UsageError line."""
    if not options.mcp:
        return []
    from hierplan.tools.mcp import load_tools as mcp_tools

    return mcp_tools(options.mcp)


def with_absolute_paths(options: RunOptions) -> RunOptions:
    """The options with ``mcp`` as an absolute path: a run is resumed from anywhere."""
    if not options.mcp:
        return options
    return replace(options, mcp=str(Path(options.mcp).expanduser().resolve()))
