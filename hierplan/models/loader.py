"""load_chat_model: a LangChain chat model (ChatHuggingFace over a transformers text-generation pipeline).

Every real weight load goes through the module-level ``_from_pretrained`` below, looked up through this
module's globals at call time, so tests/conftest.py can block all of them with one monkeypatch.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import warnings
from pathlib import Path
from typing import Any

from hierplan.errors import HierplanError, ModelLoadError, ModelNotFoundError
from hierplan.models import gguf_cache, int4, torch_thread
from hierplan.models.cpu_share import CpuShare
from hierplan.models.device import cpu_dtype_name, cuda_dtype_name, pick_device
from hierplan.models.resolve import ModelSpec, hf_cache_dir, resolve_model

log = logging.getLogger(__name__)

# "0" keeps torch's thread count for every call instead of leaving cores other processes use to them.
ADAPT_THREADS_ENV = "HIERPLAN_ADAPT_THREADS"
_OFF = {"0", "no", "off", "false"}

# End-of-turn markers of common chat templates; those present in a model's vocabulary stop generation.
_END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>")


def _from_pretrained(path: str, **kwargs: Any):
    """The one place that loads model weights (any path: folder, hub id, GGUF conversion, cache)."""
    if set(kwargs) <= {"dtype"} and (Path(path) / gguf_cache.MANIFEST).is_file():
        model = gguf_cache.load_cached(path, kwargs.get("dtype"))
        if model is not None:
            return model
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, **kwargs)


def _load_gguf(path: str, **kwargs: Any):
    """gguf_cache.convert's weight load: through _from_pretrained, looked up when called (the test guard)."""
    return _from_pretrained(path, **kwargs)


def _normalize_quantize(quantize: str | None) -> str | None:
    if quantize is None:
        return None
    value = str(quantize).strip().lower()
    if value in {"4bit", "nf4", "4"}:
        return "4bit"
    if value in {"none", "no", "off", "false", "0"}:
        return "none"
    raise ModelLoadError(f"quantize={quantize!r}: use None (auto), '4bit' or 'none'.")


def _load_cuda(path: str, device: str, dtype, quantize: str | None):
    """CUDA: 4-bit nf4 through bitsandbytes unless quantize='none'; on failure warn and load unquantized."""
    import torch

    device_map = {"": device}
    if quantize in (None, "4bit"):
        try:
            import bitsandbytes  # noqa: F401  (fail early with a clear reason)
            from transformers import BitsAndBytesConfig

            config = BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_use_double_quant=True,
                bnb_4bit_compute_dtype=dtype,
            )
            return _from_pretrained(path, quantization_config=config, device_map=device_map, dtype=dtype), "4bit"
        except AssertionError:
            raise  # the test guard
        except Exception as error:
            warnings.warn(
                f"4-bit loading failed ({type(error).__name__}: {error}); loading the model unquantized "
                f"in {dtype}. Install bitsandbytes (pip install 'hierplan[cuda]') for 4-bit.",
                RuntimeWarning,
                stacklevel=3,
            )
            torch.cuda.empty_cache()
    return _from_pretrained(path, device_map=device_map, dtype=dtype), "none"


def _eos_ids(tokenizer, model) -> list[int]:
    ids: list[int] = []
    configured = model.generation_config.eos_token_id
    for value in configured if isinstance(configured, list) else [configured]:
        if value is not None:
            ids.append(int(value))
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    template = tokenizer.chat_template or ""
    vocab = tokenizer.get_vocab()
    for token in _END_OF_TURN:
        if token in template and token in vocab:
            ids.append(int(vocab[token]))
    return list(dict.fromkeys(ids))


def _configure(model, tokenizer, max_new_tokens: int) -> None:
    """End of turn stops generation; pad token set, left padding; default max_new_tokens."""
    if not getattr(tokenizer, "chat_template", None):
        raise ModelLoadError(
            "The model's tokenizer has no chat template; hierplan needs an instruct/chat model "
            "(e.g. a *-Instruct checkpoint)."
        )
    eos = _eos_ids(tokenizer, model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token if tokenizer.eos_token is not None else tokenizer.unk_token
    if tokenizer.pad_token is None and eos:
        tokenizer.pad_token = tokenizer.convert_ids_to_tokens(eos[0])
    tokenizer.padding_side = "left"
    generation = model.generation_config
    generation.eos_token_id = eos if len(eos) != 1 else eos[0]
    generation.pad_token_id = tokenizer.pad_token_id
    generation.max_new_tokens = max_new_tokens
    generation.max_length = None


def _wrap(model, tokenizer, name: str, max_new_tokens: int, info: dict):
    import torch
    from langchain_huggingface import HuggingFacePipeline
    from transformers import pipeline

    from hierplan.models.local_chat import LocalChatModel

    # The pipeline carries model and tokenizer the way langchain-huggingface users build them; the chat
    # model generates through them itself (local_chat.py says why).
    pipe = pipeline("text-generation", model=model, tokenizer=tokenizer, return_full_text=False,
                    max_new_tokens=max_new_tokens)
    adapt = info.get("device") == "cpu" and os.environ.get(ADAPT_THREADS_ENV, "1").strip().lower() not in _OFF
    llm = HuggingFacePipeline(pipeline=pipe, model_id=name, pipeline_kwargs={"max_new_tokens": max_new_tokens})
    chat = LocalChatModel(llm=llm, model_id=name, max_tokens=max_new_tokens,
                          cpu_share=CpuShare(torch.get_num_threads()) if adapt else None)
    chat.metadata = {**(chat.metadata or {}), "hierplan_model": info}
    return chat


def _load_weights(spec: ModelSpec, device: str, quantize: str | None) -> tuple[Any, Any, dict]:
    import torch
    from transformers import AutoTokenizer

    info: dict[str, Any] = {"name": spec.name, "kind": spec.kind, "device": device}
    path, gguf_file = spec.path, None
    if spec.kind == "gguf":
        dtype_name = cpu_dtype_name() if device == "cpu" else "bfloat16"
        folder, ready = gguf_cache.cached_folder(spec.path, dtype_name)
        info.update(gguf=spec.path, source="cache" if ready else "gguf-conversion")
        path = str(folder)
        if not ready:
            try:
                gguf_cache.convert(spec.path, dtype_name, folder, load=_load_gguf)
            except OSError as error:  # cache not writable, disk full: run from the GGUF itself, uncached
                warnings.warn(
                    f"Could not write the model cache in {folder.parent} ({error}); loading {spec.path} "
                    "directly (slow: every start converts it again).",
                    RuntimeWarning,
                    stacklevel=3,
                )
                path, gguf_file = str(Path(spec.path).parent), Path(spec.path).name
                info["source"] = "gguf-direct"
    else:
        info["source"] = spec.kind
    info["path"] = path
    extra = {"gguf_file": gguf_file} if gguf_file else {}

    if device == "cpu":
        dtype = getattr(torch, cpu_dtype_name())
        try:
            model = _from_pretrained(path, dtype=dtype, **extra)
        except AssertionError:
            raise  # the test guard
        except Exception as error:
            if info["source"] != "cache":
                raise
            log.warning("Cached model %s is unreadable (%s); converting again", path, error)
            gguf_cache.discard(Path(path))
            gguf_cache.convert(spec.path, cpu_dtype_name(), Path(path), load=_load_gguf)
            info["source"] = "gguf-conversion"
            model = _from_pretrained(path, dtype=dtype)
        info["quantized"] = "none"
        int4_weights = Path(path) / int4.INT4_FILE
        if quantize != "none" and int4_weights.is_file() and int4.available():
            int4.apply(model, int4_weights)
            info["quantized"] = "int4"
    else:
        if gguf_file:
            raise ModelLoadError(f"Cannot load {spec.path} on {device} without a writable model cache.")
        dtype = getattr(torch, cuda_dtype_name())
        model, info["quantized"] = _load_cuda(path, device, dtype, quantize)
    model.eval()
    info["dtype"] = str(dtype).removeprefix("torch.")
    tokenizer = AutoTokenizer.from_pretrained(path, **extra)
    return model, tokenizer, info


@contextlib.contextmanager
def _paused_gc():
    """No cyclic garbage collection while torch, transformers and the model load.

    Imports and model construction allocate hundreds of thousands of long-lived objects, and each
    allocation burst triggers a collection that walks them all again: with collection paused, a cached
    start is about 0.5 s faster (docs/benchmarks.md, "Cold start"). Nothing made here is garbage that
    needs collecting before the load ends; collection resumes as it was afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _quiet_progress_bars():
    """transformers draws a progress bar per tensor pass; the CLI has its own progress line."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def load_chat_model(
    model: str | os.PathLike | None = None,
    *,
    device: str | None = None,
    quantize: str | None = None,
    max_new_tokens: int = 512,
    **kwargs: Any,
):
    """Load a chat model for the agent.

    model: None (env HIERPLAN_MODEL, else the embedded SmolLM2 GGUF), a Hugging Face id (local cache;
    downloaded only when the network is allowed), a local model folder, or a .gguf file (converted once
    into the cache). device: None = cuda if available else cpu. quantize: None/"4bit" = 4-bit nf4 on CUDA
    (falls back to unquantized with a warning), and on a bf16 CPU a 4-bit GGUF's own weights as exact int4
    (int4.py); "none" = float weights everywhere.

    Returns a ``LocalChatModel`` (local_chat.py); per-call sampling goes in standard keyword arguments,
    ``chat.invoke(messages, temperature=0.2, top_p=0.9, max_tokens=200, seed=7)`` or ``chat.bind(...)``.
    Other keyword arguments (meant for remote models) are ignored here.
    ``chat.metadata["hierplan_model"]`` records where
    the weights came from (``source``: "cache", "gguf-conversion", "gguf-direct" (cache not writable),
    "folder" or "hub"), path, dtype, device, quantized ("int4", "4bit" or "none").
    """
    spec = resolve_model(model)
    quantize = _normalize_quantize(quantize)
    try:
        with _paused_gc():
            # On the thread that will generate: it then holds the process's only OpenMP team (torch_thread.py).
            chat, info = torch_thread.run(_load, spec, device, quantize, max_new_tokens)
    except (HierplanError, AssertionError):
        raise
    except OSError as error:
        if spec.kind == "hub":
            raise ModelNotFoundError(
                f"Model {spec.path!r} could not be found or downloaded ({error}); the Hugging Face cache is "
                f"{hf_cache_dir()}. Fix: download it where there is network "
                f"(`huggingface-cli download {spec.path}`), or pass a local folder or .gguf file."
            ) from error
        raise ModelLoadError(f"Could not load model {spec.name!r} from {spec.path}: {error}") from error
    except Exception as error:
        raise ModelLoadError(
            f"Could not load model {spec.name!r} from {spec.path}: {type(error).__name__}: {error}"
        ) from error
    log.info("Loaded %s", info)
    return chat


def _load(spec: ModelSpec, device: str | None, quantize: str | None, max_new_tokens: int):
    device = pick_device(device)
    with _quiet_progress_bars():
        weights, tokenizer, info = _load_weights(spec, device, quantize)
    _configure(weights, tokenizer, max_new_tokens)
    return _wrap(weights, tokenizer, spec.name, max_new_tokens, info), info
