"""load_chat_model: the user's model choice -> a LangChain chat model on the engine that fits it.

- a GGUF (an embedded model's short name, or a .gguf path) on the CPU: llama.cpp, in-process through the
  prebuilt xllamacpp wheel (llamacpp/engine.py, llamacpp/chat.py);
- a Hugging Face folder or hub id, anything on CUDA, or ``engine="transformers"``: transformers through
  langchain-huggingface's HuggingFacePipeline (hf/engine.py, hf/chat.py).

Every chat model records where it runs in ``chat.metadata["hierplan_model"]``: name, engine, quantization,
device, path (the run record shows them).
"""

from __future__ import annotations

import importlib.util
import logging
import os
from typing import Any

from hierplan.errors import ModelLoadError, ModelNotFoundError, UsageError
from hierplan.models import catalog
from hierplan.models.resolve import MODEL_ENV, ModelSpec, resolve_model

log = logging.getLogger(__name__)

ENGINES = ("llama.cpp", "transformers")
ENGINE_ENV = "HIERPLAN_ENGINE"
_ALIASES = {"llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "llama_cpp": "llama.cpp", "hf": "transformers"}
# Each engine's extra (pyproject.toml) and the modules it brings: a plain `pip install hierplan` has neither
# engine, only models on a server (openai:NAME).
ENGINE_EXTRAS = {
    "llama.cpp": ("local", ("xllamacpp",)),
    "transformers": ("hf", ("torch", "transformers", "langchain_huggingface", "llguidance")),
}


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
    spec, chosen = _engine_for(model, engine, device)
    if chosen == "llama.cpp":
        chat = _load_llamacpp(spec, max_new_tokens)
    else:
        from hierplan.models.hf.engine import load_transformers_chat

        chat = load_transformers_chat(spec, device=device, quantize=quantize, max_new_tokens=max_new_tokens)
    log.info("Loaded %s", chat.metadata.get("hierplan_model"))
    return chat


def _engine_for(model: str | os.PathLike | None, engine: str | None, device: str | None) -> tuple[ModelSpec, str]:
    """The model's spec and the engine that will run it, that engine installed (else one ModelLoadError line
    naming its extra)."""
    asked = (os.fspath(model).strip() if model is not None else "") or os.environ.get(MODEL_ENV, "").strip()
    label = f"--model {asked}" if asked else f"the default model ({catalog.DEFAULT.short})"
    asked = asked or catalog.DEFAULT.short
    try:
        spec = resolve_model(model)
    except ModelNotFoundError:
        # An embedded model that is not installed needs its engine too: first say what installing the model
        # alone would not fix.
        if catalog.find(asked) is not None:
            require_engine(pick_engine(ModelSpec("gguf", "", asked), normalize_engine(engine), device), label)
        raise
    chosen = pick_engine(spec, normalize_engine(engine), device)
    require_engine(chosen, label)
    return spec, chosen


def check_engine(model: str | os.PathLike | None = None, *, engine: str | None = None, device: str | None = None,
                 **_: Any) -> None:
    """What load_chat_model checks before loading, without loading: a bad engine name or device is a UsageError,
    an engine that is not installed a ModelLoadError naming its extra. A model that cannot be found is left to
    the load, which says how to fix it."""
    try:
        _engine_for(model, engine, device)
    except ModelNotFoundError:
        pass


def _load_llamacpp(spec: ModelSpec, max_new_tokens: int):
    from hierplan.models.llamacpp.chat import ChatLlamaCpp
    from hierplan.models.llamacpp.engine import engine_for

    try:
        engine = engine_for(spec.path)
    except ImportError as error:  # installed, yet it will not load (a broken or foreign wheel)
        raise ModelLoadError(f"llama.cpp's engine failed to load ({error}); reinstall it: "
                             "pip install --force-reinstall 'hierplan[local]'") from error
    chat = ChatLlamaCpp(engine=engine, model_id=spec.name, max_tokens=max_new_tokens)
    chat.metadata = {"hierplan_model": {
        "name": spec.name, "engine": "llama.cpp", "quantization": spec.quantization or gguf_quantization(spec.path),
        "device": "cpu", "path": spec.path, "threads": engine.threads, "slots": engine.slots,
        "concurrent": engine.concurrent}}
    return chat


def missing_modules(engine: str) -> list[str]:
    """The modules ``engine`` needs that are not installed (looked up, not imported)."""
    return [name for name in ENGINE_EXTRAS[engine][1] if importlib.util.find_spec(name) is None]


def require_engine(engine: str, model: str) -> None:
    """One ModelLoadError line, naming the extra to install, where ``engine`` is not installed (``model``: what
    the user asked for, as they asked: "--model NAME")."""
    if missing := missing_modules(engine):
        extra = ENGINE_EXTRAS[engine][0]
        what = "the local engine (llama.cpp)" if engine == "llama.cpp" else "the transformers engine"
        raise ModelLoadError(
            f"{model} needs {what}, which is not installed ({', '.join(missing)}): "
            f"pip install 'hierplan[{extra}]'; or use a model on a server: --model openai:NAME --base-url URL")


def gguf_quantization(path: str) -> str | None:
    """The GGUF's own file type (e.g. "Q4_K_M"), read from its header; None when it does not say."""
    try:
        from gguf import GGUFReader, LlamaFileType

        field = GGUFReader(path).fields.get("general.file_type")
        return LlamaFileType(int(field.parts[field.data[0]][0])).name.removeprefix("MOSTLY_") if field else None
    except Exception:  # an unusual header only costs the label
        return None
