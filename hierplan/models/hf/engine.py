"""The transformers engine: a model folder, a Hugging Face id or a GGUF loaded with transformers, served as an
HFChatModel (chat.py) over langchain-huggingface's ``HuggingFacePipeline``.

CUDA loads 4-bit nf4 through bitsandbytes (falling back, with a warning, to unquantized weights); CPU loads in
device.py's dtype. A GGUF loads with ``from_pretrained(folder, gguf_file=name)``: transformers dequantizes it.

Every weight load goes through the module-level ``_from_pretrained`` below, looked up through this module's
globals at call time, so tests/conftest.py can refuse all of them with one monkeypatch. torch and transformers
are imported inside functions: importing this module imports neither.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from pathlib import Path
from typing import Any

from hierplan.errors import HierplanError, ModelLoadError, ModelNotFoundError
from hierplan.models.hf.device import cpu_dtype_name, cuda_dtype_name, pick_device
from hierplan.models.resolve import ModelSpec, hf_cache_dir

log = logging.getLogger(__name__)

ENGINE = "transformers"
DEFAULT_MAX_NEW_TOKENS = 512
# End-of-turn markers of common chat templates; those the template uses and the vocabulary holds stop generation.
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>")
_FOUR_BIT = {"4bit", "nf4", "4"}
_NO_QUANTIZE = {"none", "no", "off", "false", "0"}


def _from_pretrained(path: str, **kwargs: Any) -> Any:
    """The one place that loads model weights (folder, hub id, or a GGUF with ``gguf_file=``)."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, **kwargs)


def normalize_quantize(quantize: str | None) -> str | None:
    """None (auto: 4-bit on CUDA), "4bit" or "none"; ModelLoadError for anything else."""
    if quantize is None:
        return None
    value = str(quantize).strip().lower()
    if value in _FOUR_BIT:
        return "4bit"
    if value in _NO_QUANTIZE:
        return "none"
    raise ModelLoadError(f"quantize={quantize!r}: use None (auto), '4bit' or 'none'.")


def _load_cuda(path: str, device: str, dtype: Any, quantize: str | None, **extra: Any) -> tuple[Any, str]:
    """CUDA: 4-bit nf4 through bitsandbytes unless quantize='none'; on failure warn and load unquantized."""
    import torch

    device_map = {"": device}
    if quantize in (None, "4bit"):
        try:
            import bitsandbytes  # noqa: F401  (fail early with a clear reason)
            from transformers import BitsAndBytesConfig

            config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                        bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=dtype)
            model = _from_pretrained(path, quantization_config=config, device_map=device_map, dtype=dtype, **extra)
            return model, "4bit"
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
    return _from_pretrained(path, device_map=device_map, dtype=dtype, **extra), "none"


def eos_ids(tokenizer: Any, model: Any) -> list[int]:
    """Every id that ends a reply: the generation config's, the tokenizer's, and the template's end-of-turn."""
    ids: list[int] = []
    configured = model.generation_config.eos_token_id
    for value in configured if isinstance(configured, list) else [configured]:
        if value is not None:
            ids.append(int(value))
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    template = tokenizer.chat_template or ""
    vocab = tokenizer.get_vocab()
    for token in END_OF_TURN:
        if token in template and token in vocab:
            ids.append(int(vocab[token]))
    return list(dict.fromkeys(ids))


def _configure(model: Any, tokenizer: Any, max_new_tokens: int) -> None:
    """End of turn stops generation; pad token set, left padding; default max_new_tokens."""
    if not getattr(tokenizer, "chat_template", None):
        raise ModelLoadError(
            "The model's tokenizer has no chat template; hierplan needs an instruct/chat model "
            "(e.g. a *-Instruct checkpoint)."
        )
    eos = eos_ids(tokenizer, model)
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


def _where(spec: ModelSpec) -> tuple[str, dict[str, Any]]:
    """The path from_pretrained takes and its extra kwargs: a GGUF is its folder plus ``gguf_file``."""
    if spec.kind == "gguf":
        gguf = Path(spec.path)
        return str(gguf.parent), {"gguf_file": gguf.name}
    return spec.path, {}


def _gguf_dense() -> dict[str, Any]:
    """A GGUF unpacked into dense weights at load. transformers' default keeps the blocks packed for a matmul
    kernel it fetches from the Hugging Face hub (a network lookup at every load, none offline) and else
    unpacks them in every forward pass; dense weights in device.py's dtype are the predictable choice."""
    from transformers import GgufConfig

    return {"quantization_config": GgufConfig(dequantize=True)}


def _load_weights(spec: ModelSpec, device: str, quantize: str | None) -> tuple[Any, Any, dict[str, Any]]:
    import torch
    from transformers import AutoTokenizer

    path, extra = _where(spec)
    if spec.kind == "gguf":  # already quantized by whoever made the file: no bitsandbytes on top of it
        dtype = getattr(torch, cpu_dtype_name() if device == "cpu" else cuda_dtype_name())
        device_map = {} if device == "cpu" else {"device_map": {"": device}}
        model, quantization = _from_pretrained(path, dtype=dtype, **extra, **_gguf_dense(), **device_map), "none"
    elif device == "cpu":
        dtype = getattr(torch, cpu_dtype_name())
        model, quantization = _from_pretrained(path, dtype=dtype, **extra), "none"
    else:
        dtype = getattr(torch, cuda_dtype_name())
        model, quantization = _load_cuda(path, device, dtype, quantize, **extra)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(path, **extra)
    info = {"name": spec.name, "engine": ENGINE, "kind": spec.kind, "device": device,
            "dtype": str(dtype).removeprefix("torch."), "quantization": quantization, "path": spec.path}
    return model, tokenizer, info


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


def _wrap(model: Any, tokenizer: Any, name: str, max_new_tokens: int, info: dict[str, Any]) -> Any:
    from langchain_huggingface import HuggingFacePipeline
    from transformers import pipeline

    from hierplan.models.hf.chat import HFChatModel

    pipe = pipeline("text-generation", model=model, tokenizer=tokenizer, max_new_tokens=max_new_tokens)
    llm = HuggingFacePipeline(pipeline=pipe, model_id=name, pipeline_kwargs={"max_new_tokens": max_new_tokens})
    chat = HFChatModel(llm=llm, model_id=name, max_tokens=max_new_tokens)
    chat.metadata = {**(chat.metadata or {}), "hierplan_model": info}
    return chat


def load_transformers_chat(spec: ModelSpec, *, device: str | None = None, quantize: str | None = None,
                           max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> Any:
    """The chat model (an HFChatModel) for ``spec`` (resolve.ModelSpec: kind "folder", "hub" or "gguf").

    device: None = cuda if available else cpu. quantize: None/"4bit" = 4-bit nf4 on CUDA (unquantized, with a
    warning, where bitsandbytes cannot); "none" = float weights. On CPU the weights are float (device.py's
    dtype) either way. ``chat.metadata["hierplan_model"]``: name, engine, kind, device, dtype, quantization
    ("4bit"/"none"), path. Raises ModelNotFoundError for a hub id that is neither cached nor downloadable,
    ModelLoadError for anything else that fails.
    """
    quantize = normalize_quantize(quantize)
    try:
        device = pick_device(device)
        with _quiet_progress_bars():
            model, tokenizer, info = _load_weights(spec, device, quantize)
        _configure(model, tokenizer, max_new_tokens)
        chat = _wrap(model, tokenizer, spec.name, max_new_tokens, info)
    except (HierplanError, AssertionError):
        raise  # already clear, or the test guard
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
