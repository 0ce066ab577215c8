"""Convert a GGUF model once into a plain transformers folder in the user's cache, keyed by content hash.

Dequantizing a GGUF takes ~20 s (the tokenizer alone ~4 s); loading the same weights back from
safetensors takes well under a second. So the first load of a .gguf writes
``<cache>/models/<key>/`` (model.safetensors, config.json, generation_config.json, tokenizer files,
a ``hierplan-model.json`` manifest, and for a 4-bit GGUF on a bf16 CPU ``hierplan-int4.safetensors``:
its linear weights as exact int4, see int4.py), atomically: everything goes to a temp folder beside it that is
renamed into place only when complete, so a crash never leaves a half cache.

``key`` = sha256 over (the file's sha256, the stored dtype, the cache format). The file's sha256 is
memoised in ``models/hashes.json`` under (resolved path, size, mtime_ns, inode): a changed file has a
different stat and is hashed again, so the key follows the content, and an unchanged file costs one stat.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

CACHE_FORMAT = 2  # 2: adds the int4 weights of 4-bit GGUFs
MANIFEST = "hierplan-model.json"
_HASHES = "hashes.json"


def cache_root() -> Path:
    """$HIERPLAN_CACHE_DIR, else $XDG_CACHE_HOME/hierplan, else ~/.cache/hierplan."""
    explicit = os.environ.get("HIERPLAN_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "hierplan"


def models_dir() -> Path:
    return cache_root() / "models"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _write_json_atomic(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def content_sha256(path: str | os.PathLike) -> str:
    """sha256 of the file's bytes, memoised under its (path, size, mtime_ns, inode)."""
    file = Path(path).resolve()
    st = file.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    index_path = models_dir() / _HASHES
    try:
        index = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {}
    entry = index.get(str(file))
    if isinstance(entry, dict) and all(entry.get(k) == v for k, v in stamp.items()) and entry.get("sha256"):
        return entry["sha256"]
    sha = _sha256_file(file)
    index[str(file)] = {**stamp, "sha256": sha}
    try:
        _write_json_atomic(index_path, index)
    except OSError as error:  # a read-only cache still works, just without the memo
        log.debug("could not record the hash of %s: %s", file, error)
    return sha


def cache_key(gguf_path: str | os.PathLike, dtype_name: str) -> str:
    sha = content_sha256(gguf_path)
    return hashlib.sha256(f"{sha}:{dtype_name}:format{CACHE_FORMAT}".encode()).hexdigest()[:32]


def cached_folder(gguf_path: str | os.PathLike, dtype_name: str) -> tuple[Path, bool]:
    """(folder for this file and dtype, whether it is already complete)."""
    folder = models_dir() / cache_key(gguf_path, dtype_name)
    return folder, (folder / MANIFEST).is_file()


def convert(gguf_path: str | os.PathLike, dtype_name: str, folder: Path, *, load: Callable[..., Any]) -> Path:
    """Dequantize the GGUF once and write it to ``folder`` atomically; returns ``folder``.

    ``load(path, gguf_file=..., dtype=...)`` loads the weights: the loader passes its own hook (the test
    guard's), so this module needs no import of the loader.
    """
    import torch
    from transformers import AutoTokenizer

    from hierplan.models import int4

    source = Path(gguf_path).resolve()
    dtype = getattr(torch, dtype_name)
    log.warning("Converting %s once into %s (about 20 s; later starts load the cache)", source.name, folder)
    started = time.perf_counter()
    model = load(str(source.parent), gguf_file=source.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        # The GGUF weights were dequantized into plain tensors on load (no GGUF kernels on CPU);
        # dropping the quantizer's bookkeeping turns this into an ordinary, serialisable model.
        if any(type(m).__name__.startswith("Gguf") for m in model.modules()):
            raise RuntimeError("GGUF weights stayed packed (GGUF kernels active); cannot cache them as safetensors")
        quantizer.remove_quantization_config(model)

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{folder.name}-", dir=folder.parent))
    try:
        # From the fp32 weights, before rounding to the CPU dtype: only they round-trip exactly.
        has_int4 = dtype_name == "bfloat16" and int4.available() and int4.save_if_exact(model, tmp / int4.INT4_FILE)
        model = model.to(dtype)
        model.config.dtype = dtype
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        import transformers

        manifest = {
            "format": CACHE_FORMAT,
            "source": str(source),
            "source_sha256": content_sha256(source),
            "source_size": source.stat().st_size,
            "dtype": dtype_name,
            "int4": has_int4,
            "transformers": transformers.__version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
        if folder.exists() and not (folder / MANIFEST).is_file():
            discard(folder)  # leftover without a manifest: not a valid cache entry
        try:
            os.rename(tmp, folder)
        except OSError:
            if not (folder / MANIFEST).is_file():  # not a concurrent writer winning the race
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.warning("Converted %s in %.1f s", source.name, time.perf_counter() - started)
    return folder


def load_cached(folder: str | os.PathLike, dtype):
    """The model in a cache folder written by ``convert``, or None where from_pretrained must do it.

    This is from_pretrained's work without its generic machinery: a model built from config.json with
    weight initialisation off, then the stored tensors assigned in place. That machinery (renaming rules
    compiled for every architecture, a meta-device init of each weight it then overwrites) costs about
    0.15 s of a ~3 s start (docs/benchmarks.md, "Cold start"). Used only when the file holds exactly the
    model's weights, every one not in it being tied to one that is; anything else returns None.
    """
    from safetensors import safe_open
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig
    from transformers.initialization import no_init_weights

    folder = Path(folder)
    weights = folder / "model.safetensors"
    if not weights.is_file():  # sharded or another layout: from_pretrained knows them all
        return None
    config = AutoConfig.from_pretrained(str(folder))
    with no_init_weights():
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    with safe_open(str(weights), framework="pt") as handle:
        state = {key: handle.get_tensor(key) for key in handle.keys()}
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    model.tie_weights()
    tensors = model.state_dict(keep_vars=True)
    loaded = {id(tensors[key]) for key in state if key in tensors}
    untied = [key for key in missing if id(tensors[key]) not in loaded]
    if unexpected or untied:
        log.debug("cache %s: unexpected %s, missing %s; using from_pretrained", folder, unexpected, untied)
        return None
    if (folder / "generation_config.json").is_file():
        model.generation_config = GenerationConfig.from_pretrained(str(folder))
    model.config._name_or_path = model.name_or_path = str(folder)
    return model


def discard(folder: Path) -> None:
    """Move a broken cache folder out of the way (rename first, so readers never see it half-deleted)."""
    if not folder.exists():
        return
    trash = folder.with_name(f".trash-{folder.name}-{os.getpid()}")
    try:
        os.rename(folder, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)
