"""Where the model runs and in which dtype: device choice and the CPU/CUDA compute dtype (HIERPLAN_DTYPE)."""

from __future__ import annotations

import os

from hierplan.errors import ModelLoadError

DTYPE_ENV = "HIERPLAN_DTYPE"  # "auto" (default), "bfloat16"/"bf16", "float32"/"fp32", "float16"/"fp16"
_DTYPE_ALIASES = {"bf16": "bfloat16", "fp32": "float32", "fp16": "float16", "half": "float16", "float": "float32"}


def pick_device(device: str | None) -> str:
    import torch

    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelLoadError(f"device={device!r} was asked for, but torch sees no CUDA GPU; use device='cpu'.")
    return device


def native_bf16() -> bool:
    """The CPU computes bf16 natively (AVX512-BF16 or AMX); elsewhere torch emulates it, slowly."""
    import torch

    cpu = getattr(torch, "cpu", None)
    for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        try:
            if getattr(cpu, probe)():
                return True
        except Exception:
            pass
    return False


def cpu_dtype_name() -> str:
    """The CPU compute dtype: bfloat16 where the CPU has native bf16 (AVX512-BF16 or AMX), else float32.

    bf16 decodes a little slower than fp32 where the CPU has it natively, but halves memory and disk and loads
    faster (docs/models.md); without native bf16 it is emulated and slower.
    Override with HIERPLAN_DTYPE.
    """
    forced = os.environ.get(DTYPE_ENV, "").strip().lower()
    if forced and forced != "auto":
        name = _DTYPE_ALIASES.get(forced, forced)
        if name not in {"bfloat16", "float32", "float16"}:
            raise ModelLoadError(f"{DTYPE_ENV}={forced!r} is not one of auto, bfloat16, float32, float16.")
        return name
    return "bfloat16" if native_bf16() else "float32"


def cuda_dtype_name() -> str:
    import torch

    forced = os.environ.get(DTYPE_ENV, "").strip().lower()
    if forced and forced != "auto":
        return _DTYPE_ALIASES.get(forced, forced)
    return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
