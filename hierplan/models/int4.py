"""Run a 4-bit GGUF's own 4-bit weights on CPU: groupwise int4 linears through torch's int4 kernel.

The embedded GGUF stores its linear weights as Q4_1: blocks of 32 values ``min + d * q``, q in 0..15.
transformers dequantizes them to floats; on CPU, decode is then bound by reading those floats (fp32: 4 bytes
a weight, bf16: 2), which made bf16 no faster than fp32. Re-expressed as groupwise asymmetric int4
(group 32, ``w = (q - 8) * scale + zero``), the same weights cost half a byte each, and torch's
``_weight_int4pack_mm_for_cpu`` multiplies bf16 activations by them directly (measured in
docs/benchmarks.md, "Decode").

The conversion is only used where it is exact: ``quantize`` re-derives each group's min and step and
reports the largest difference from the dequantized weight; a GGUF whose weights were not 4-bit with
groups of 32 (Q8_0, F16, or a plain fp32 model) does not round-trip, and keeps its float weights.

Why not a library: torchao's CPU int4 layout (``Int4CPULayout``/"opaque") is gone from torchao 0.18, the
version that matches torch 2.13, and its remaining int4 formats target GPU kernels. The kernel used here is
torch's own (aten), so only the packing below is ours.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

GROUP_SIZE = 32
INT4_FILE = "hierplan-int4.safetensors"
# INT4_FILE's weights in torch's own packed layout, written on first use (see apply).
KERNEL_FILE = "hierplan-int4-kernel.safetensors"
# A dequantized Q4_1 weight differs from its int4 re-derivation by float rounding only (~1e-7);
# anything above this was not 4-bit with groups of 32, and converting it would change the model.
EXACT_TOLERANCE = 1e-5
# torch's CPU packing refuses other output sizes ("expect N to be dividable by 16").
OUT_MULTIPLE = 16
# The int4 kernel's time grows with every row it multiplies; a bf16 GEMM's barely does until ~32 rows.
# Measured on the embedded model's four layer shapes (docs/benchmarks.md, "Prefill"): int4 is 2-3x faster
# for 1-4 rows (decode, batched decode), about even at 8, and 2-7x slower from 16 rows (prefill) up.
FLOAT_ROWS = 8


def available() -> bool:
    """torch has the CPU int4 kernel, and the CPU computes bf16 natively (the kernel's fast path)."""
    import torch

    from hierplan.models.device import native_bf16

    return hasattr(torch, "_weight_int4pack_mm_for_cpu") and native_bf16()


def quantize(weight) -> tuple[dict, float]:
    """Groupwise asymmetric int4 of a [N, K] weight: ({q (uint8 [N, K/2], two per byte), scale, zero}, max error)."""
    import torch

    n, k = weight.shape
    w = weight.detach().float().reshape(n, k // GROUP_SIZE, GROUP_SIZE)
    low, high = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
    scale = ((high - low) / 15).clamp(min=torch.finfo(torch.float32).tiny)
    q = torch.round((w - low) / scale).clamp(0, 15)
    error = (q * scale + low - w).abs().max().item()
    q = q.to(torch.uint8).reshape(n, k)
    packed = q[:, ::2] | (q[:, 1::2] << 4)
    # The kernel's convention: w = (q - 8) * scale + zero.
    return {"q": packed, "scale": scale.squeeze(-1), "zero": (low + 8 * scale).squeeze(-1)}, error


def _int4_linear_class():
    """The module class, built on first use so that importing this file does not import torch."""
    import torch
    from torch import nn

    class _Int4Linear(nn.Module):
        """A linear with two forms of one weight: int4 for a few rows at a time (decode), the float weight
        for many (prefill), each where it is faster (FLOAT_ROWS)."""

        def __init__(self, linear: nn.Linear, packed, scales_zeros):
            super().__init__()
            self.in_features, self.out_features = linear.in_features, linear.out_features
            self.weight, self.bias = linear.weight, linear.bias
            self.register_buffer("packed", packed, persistent=False)
            self.register_buffer("scales_zeros", scales_zeros, persistent=False)

        def forward(self, x):
            flat = x.reshape(-1, self.in_features)
            if flat.shape[0] >= FLOAT_ROWS:
                return nn.functional.linear(x.to(self.weight.dtype), self.weight, self.bias).to(x.dtype)
            y = torch._weight_int4pack_mm_for_cpu(flat.to(torch.bfloat16), self.packed, GROUP_SIZE, self.scales_zeros)
            if self.bias is not None:
                y = y + self.bias.to(torch.bfloat16)
            return y.reshape(*x.shape[:-1], self.out_features).to(x.dtype)

        def extra_repr(self) -> str:
            return (f"in_features={self.in_features}, out_features={self.out_features}, int4 group={GROUP_SIZE}"
                    f" below {FLOAT_ROWS} rows")

    return _Int4Linear


def kernel_form(q, scale, zero) -> dict:
    """The stored nibbles, scales and zeros in the form torch's kernel takes: its own packing of the
    weight, and scales and zeros as [K / group, N, 2] in the activation dtype."""
    import torch

    n, half_k = q.shape
    unpacked = torch.stack([q & 0xF, q >> 4], dim=-1).reshape(n, 2 * half_k).to(torch.int32)
    return {
        "packed": torch._convert_weight_to_int4pack_for_cpu(unpacked, 1),
        "scales_zeros": torch.stack([scale, zero], dim=-1).transpose(0, 1).contiguous().to(torch.bfloat16),
    }


def kernel_fingerprint(shapes) -> str:
    """A digest of how this torch packs fixed probe weights, one per (out, in) shape.

    The packed layout is torch's internal one: it may change with the torch version or the CPU. A stored
    packing is only reused where the probes pack to the same bytes, which costs ~20 ms against ~0.2 s of
    repacking every start.
    """
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for n, k in sorted(shapes):
        probe = torch.randint(0, 16, (n, k), dtype=torch.int32, generator=torch.Generator().manual_seed(n * k))
        digest.update(f"{n}x{k}".encode())
        digest.update(torch._convert_weight_to_int4pack_for_cpu(probe, 1).numpy().tobytes())
    return digest.hexdigest()


def _targets(model):
    """(name, module) of the linears inside the decoder layers that the kernel can take; the tied
    embedding/lm_head stays as it is."""
    from torch import nn

    for name, module in model.named_modules():
        if (isinstance(module, nn.Linear) and ".layers." in f".{name}" and module.in_features % GROUP_SIZE == 0
                and module.out_features % OUT_MULTIPLE == 0):
            yield name, module


def save_if_exact(model, path: Path) -> bool:
    """Write the int4 form of the model's decoder linears to ``path`` if every one round-trips exactly."""
    from safetensors.torch import save_file

    tensors = {}
    for name, module in _targets(model):
        parts, error = quantize(module.weight)
        if error > EXACT_TOLERANCE:
            return False
        tensors.update({f"{name}.{key}": value.contiguous() for key, value in parts.items()})
    if not tensors:
        return False
    save_file(tensors, str(path))
    return True


def _stored_kernel_form(path: Path, fingerprint: str) -> dict | None:
    """The kernel-form tensors in ``path`` if this torch packs them the same way, else None."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as handle:
            if (handle.metadata() or {}).get("fingerprint") != fingerprint:
                return None
            return {key: handle.get_tensor(key) for key in handle.keys()}
    except Exception as error:  # missing, truncated or foreign: repack from the nibbles
        log.debug("int4 kernel form %s not used: %s", path, error)
        return None


def _store_kernel_form(path: Path, tensors: dict, fingerprint: str) -> None:
    """Best effort: a read-only cache only means repacking at every start."""
    from safetensors.torch import save_file

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        save_file(tensors, str(tmp), metadata={"fingerprint": fingerprint})
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        log.debug("could not store the int4 kernel form in %s: %s", path, error)


def apply(model, path: Path) -> int:
    """Swap the decoder linears named in ``path`` for int4 ones; returns how many were swapped.

    The kernel form of the weights is kept beside ``path`` (KERNEL_FILE) and reused while this torch
    packs the same way (kernel_fingerprint); otherwise it is rebuilt from ``path`` and stored again.
    """
    from safetensors.torch import load_file

    targets = dict(_targets(model))
    fingerprint = kernel_fingerprint({(m.out_features, m.in_features) for m in targets.values()})
    kernel_path = path.with_name(KERNEL_FILE)
    tensors = _stored_kernel_form(kernel_path, fingerprint)
    if tensors is None:
        nibbles = load_file(str(path))
        tensors = {}
        for name in targets:
            if f"{name}.q" in nibbles:
                parts = kernel_form(*(nibbles[f"{name}.{key}"] for key in ("q", "scale", "zero")))
                tensors.update({f"{name}.{key}": value for key, value in parts.items()})
        _store_kernel_form(kernel_path, tensors, fingerprint)
    cls = _int4_linear_class()
    swapped = 0
    for name, module in targets.items():
        if f"{name}.packed" not in tensors:
            continue
        parent_name, _, child = name.rpartition(".")
        new = cls(module, tensors[f"{name}.packed"], tensors[f"{name}.scales_zeros"])
        setattr(model.get_submodule(parent_name), child, new)
        swapped += 1
    return swapped
