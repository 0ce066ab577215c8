"""Model loading. Light at import time: torch/transformers are imported only when a model is loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["load_chat_model", "resolve_model"]

if TYPE_CHECKING:  # pragma: no cover
    from hierplan.models.loader import load_chat_model
    from hierplan.models.resolve import resolve_model


def __getattr__(name: str) -> Any:
    if name == "load_chat_model":
        from hierplan.models.loader import load_chat_model

        return load_chat_model
    if name == "resolve_model":
        from hierplan.models.resolve import resolve_model

        return resolve_model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
