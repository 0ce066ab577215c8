"""The outcome of one sandboxed run, and the isolation levels."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ExitReason = Literal["ok", "error", "timeout", "memory", "output_truncated", "killed"]
Level = Literal["none", "basic", "full"]

#: Every layer the sandbox knows, in the order they are reported.
ALL_LAYERS: tuple[str, ...] = ("bwrap", "landlock", "seccomp", "rlimits", "uid", "env")

#: Layers each level needs. "basic": the code cannot exhaust the host (rlimits under a non-root
#: uid), reach the network, signal other processes or outlive the run (seccomp), nor see the
#: agent's environment. "full" adds filesystem confinement (bwrap namespaces + Landlock).
LEVEL_LAYERS: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "basic": frozenset({"rlimits", "env", "uid", "seccomp"}),
    "full": frozenset(ALL_LAYERS),
}
LEVEL_ORDER: tuple[str, ...] = ("none", "basic", "full")


def level_of(layers: set[str] | frozenset[str] | list[str]) -> Level:
    """The highest level whose layers are all in ``layers``."""
    have = set(layers)
    best: Level = "none"
    for name in LEVEL_ORDER:
        if LEVEL_LAYERS[name] <= have:
            best = name  # type: ignore[assignment]
    return best


class ExecutionResult(BaseModel):
    """What the code did. Failures of the code itself come back here with ``ok=False``."""

    ok: bool
    stdout: str = ""
    stderr: str = ""
    error: str | None = Field(None, description="Short human-readable error, None when ok.")
    exit_reason: ExitReason = "ok"
    returncode: int | None = Field(None, description="Exit status; negative: killed by that signal.")
    duration_s: float = 0.0
    isolation: list[str] = Field(default_factory=list, description="Layers actually applied.")
    level: Level = "none"
    outputs: dict[str, Any] = Field(default_factory=dict, description=(
        "With collect_outputs: the files the code saved under ./out/ ({path under out/: bytes, or what "
        "run_python's save_output made of each}), read back within the limits given."))
    outputs_skipped: dict[str, int] = Field(default_factory=dict, description="Files under ./out/ over the "
                                            "limit per file, with their sizes (not read back).")
