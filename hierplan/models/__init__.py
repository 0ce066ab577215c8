"""Model loading. Light at import time: torch/transformers (local) and openai (remote) load with a model."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

__all__ = ["load_chat_model", "resolve_model"]

if TYPE_CHECKING:  # pragma: no cover
    from hierplan.models.resolve import resolve_model

REMOTE_PREFIX = "openai:"


def model_spec(model: str | os.PathLike | None) -> str | os.PathLike | None:
    """The model a spec names: ``model``, or $HIERPLAN_MODEL when it is None or blank (None: the embedded default)."""
    if model is None or (isinstance(model, str) and not model.strip()):
        return os.environ.get("HIERPLAN_MODEL", "").strip() or None
    return model


def is_remote(model: str | os.PathLike | None) -> bool:
    """Whether the spec (after model_spec) names a model on an OpenAI-compatible server: ``openai:NAME``."""
    spec = model_spec(model)
    return isinstance(spec, str) and spec.strip().lower().startswith(REMOTE_PREFIX)


def load_chat_model(model: str | os.PathLike | None = None, *, base_url: str | None = None, **kwargs: Any):
    """The chat model for ``model``: ``openai:NAME`` is a model on an OpenAI-compatible server (base_url, else
    OPENAI_BASE_URL; hierplan.models.remote.chat), anything else a local model (hierplan.models.loader).
    None: $HIERPLAN_MODEL, else the embedded default."""
    spec = model_spec(model)
    if is_remote(spec):
        from hierplan.models.remote.chat import load_remote_model

        return load_remote_model(spec, base_url=base_url, **kwargs)
    _no_base_url(spec, base_url)
    from hierplan.models.loader import load_chat_model as load_local

    return load_local(model, **kwargs)


def _no_base_url(spec: str | os.PathLike | None, base_url: str | None) -> None:
    if base_url is not None:
        from hierplan.errors import UsageError

        raise UsageError(f"--base-url is for models on a server (openai:NAME); {spec or 'the default model'!s} "
                         "is a local model")


def check_installed(model: str | os.PathLike | None = None, *, base_url: str | None = None, **kwargs: Any) -> None:
    """Whether load_chat_model's engine for ``model`` is installed, checked without loading anything: a model on a
    server needs none (the light install, ``pip install hierplan``); a local one needs the ``local`` or ``hf``
    extra, else one ModelLoadError line names it."""
    spec = model_spec(model)
    if is_remote(spec):
        return
    _no_base_url(spec, base_url)
    from hierplan.models.loader import check_engine

    check_engine(model, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "resolve_model":
        from hierplan.models.resolve import resolve_model

        return resolve_model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
