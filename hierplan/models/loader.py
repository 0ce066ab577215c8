"""load_chat_model: the user's model choice -> a LangChain chat model on the engine that fits it.

- a GGUF (an embedded model's short name, or a .gguf path) on the CPU: llama.cpp, in-process through the
  prebuilt xllamacpp wheel (llamacpp/engine.py, llamacpp/chat.py);
- a Hugging Face folder or hub id, anything on CUDA, or ``engine="transformers"``: transformers through
  langchain-huggingface's HuggingFacePipeline (hf/engine.py, hf/chat.py).

Every chat model records where it runs in ``chat.metadata["hierplan_model"]``: name, engine, quantization,
device, path (the run record shows them).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from hierplan.errors import ModelLoadError, UsageError
from hierplan.models.resolve import ModelSpec, resolve_model

log = logging.getLogger(__name__)

ENGINES = ("llama.cpp", "transformers")
ENGINE_ENV = "HIERPLAN_ENGINE"
_ALIASES = {"llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "llama_cpp": "llama.cpp", "hf": "transformers"}


def normalize_engine(engine: str | None) -> str | None:
    """None (choose by model and device), "llama.cpp" or "transformers"; a bad name is a UsageError."""
    value = (engine if engine is not None else os.environ.get(ENGINE_ENV, "")).strip().lower()
    if not value or value == "auto":
        return None
    value = _ALIASES.get(value, value)
    if value not in ENGINES:
        raise UsageError(f"engine {engine!r}: use auto, {' or '.join(ENGINES)} ({ENGINE_ENV})")
    return value


def pick_engine(spec: ModelSpec, engine: str | None, device: str | None) -> str:
    if engine == "llama.cpp" and spec.kind != "gguf":
        raise UsageError(f"--engine llama.cpp runs GGUF files; {spec.name} is a {spec.kind} model "
                         "(use --engine transformers)")
    if engine == "llama.cpp" and device not in (None, "auto", "cpu"):
        raise UsageError("--engine llama.cpp runs on the CPU here (the xllamacpp wheel is a CPU build); "
                         "use --engine transformers for CUDA")
    if engine is not None:
        return engine
    return "llama.cpp" if spec.kind == "gguf" and device in (None, "auto", "cpu") else "transformers"


def load_chat_model(
    model: str | os.PathLike | None = None,
    *,
    engine: str | None = None,
    device: str | None = None,
    quantize: str | None = None,
    max_new_tokens: int = 512,
    **kwargs: Any,
):
    """Load a chat model for the agent.

    model: None ($HIERPLAN_MODEL, else the embedded default, Qwen2.5-Coder-1.5B-Instruct), an embedded short
    name (``hierplan models``), a .gguf file, a model folder, or a Hugging Face id (local cache; downloaded
    only when the network is allowed). engine: None = llama.cpp for a GGUF on the CPU, else transformers.
    device and quantize are the transformers engine's (cuda with 4-bit nf4 by default). Per-call sampling goes
    in standard keyword arguments: ``chat.invoke(messages, temperature=0.2, top_p=0.9, max_tokens=200,
    seed=7)``. Other keyword arguments (meant for remote models) are ignored here.
    """
    spec = resolve_model(model)
    chosen = pick_engine(spec, normalize_engine(engine), device)
    if chosen == "llama.cpp":
        chat = _load_llamacpp(spec, max_new_tokens)
    else:
        from hierplan.models.hf.engine import load_transformers_chat

        chat = load_transformers_chat(spec, device=device, quantize=quantize, max_new_tokens=max_new_tokens)
    log.info("Loaded %s", chat.metadata.get("hierplan_model"))
    return chat


def _load_llamacpp(spec: ModelSpec, max_new_tokens: int):
    from hierplan.models.llamacpp.chat import ChatLlamaCpp
    from hierplan.models.llamacpp.engine import engine_for

    try:
        engine = engine_for(spec.path)
    except ImportError as error:
        raise ModelLoadError(f"llama.cpp's engine is not installed ({error}); `pip install xllamacpp`, or run "
                             "the model with --engine transformers") from error
    chat = ChatLlamaCpp(engine=engine, model_id=spec.name, max_tokens=max_new_tokens)
    chat.metadata = {"hierplan_model": {
        "name": spec.name, "engine": "llama.cpp", "quantization": spec.quantization or gguf_quantization(spec.path),
        "device": "cpu", "path": spec.path, "threads": engine.threads, "slots": engine.slots,
        "concurrent": engine.concurrent}}
    return chat


def gguf_quantization(path: str) -> str | None:
    """The GGUF's own file type (e.g. "Q4_K_M"), read from its header; None when it does not say."""
    try:
        from gguf import GGUFReader, LlamaFileType

        field = GGUFReader(path).fields.get("general.file_type")
        return LlamaFileType(int(field.parts[field.data[0]][0])).name.removeprefix("MOSTLY_") if field else None
    except Exception:  # an unusual header only costs the label
        return None
