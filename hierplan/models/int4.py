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

from pathlib import Path

GROUP_SIZE = 32
INT4_FILE = "hierplan-int4.safetensors"
# A dequantized Q4_1 weight differs from its int4 re-derivation by float rounding only (~1e-7);
# anything above this was not 4-bit with groups of 32, and converting it would change the model.
EXACT_TOLERANCE = 1e-5
# torch's CPU packing refuses other output sizes ("expect N to be dividable by 16").
OUT_MULTIPLE = 16


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
        def __init__(self, q, scale, zero, bias=None):
            super().__init__()
            n, half_k = q.shape
            unpacked = torch.stack([q & 0xF, q >> 4], dim=-1).reshape(n, 2 * half_k).to(torch.int32)
            self.in_features, self.out_features = 2 * half_k, n
            self.register_buffer("packed", torch._convert_weight_to_int4pack_for_cpu(unpacked, 1), persistent=False)
            # [K / group, N, 2] in the activation dtype, as the kernel expects.
            scales_zeros = torch.stack([scale, zero], dim=-1).transpose(0, 1).contiguous().to(torch.bfloat16)
            self.register_buffer("scales_zeros", scales_zeros, persistent=False)
            self.register_buffer("bias", None if bias is None else bias.detach().to(torch.bfloat16), persistent=False)

        def forward(self, x):
            flat = x.reshape(-1, self.in_features).to(torch.bfloat16)
            y = torch._weight_int4pack_mm_for_cpu(flat, self.packed, GROUP_SIZE, self.scales_zeros)
            if self.bias is not None:
                y = y + self.bias
            return y.reshape(*x.shape[:-1], self.out_features).to(x.dtype)

        def extra_repr(self) -> str:
            return f"in_features={self.in_features}, out_features={self.out_features}, int4 group={GROUP_SIZE}"

    return _Int4Linear


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
        if module.bias is not None:
            tensors[f"{name}.bias"] = module.bias.detach().float().contiguous()
    if not tensors:
        return False
    save_file(tensors, str(path))
    return True


def apply(model, path: Path) -> int:
    """Swap the decoder linears named in ``path`` for int4 ones; returns how many were swapped."""
    from safetensors.torch import load_file

    tensors = load_file(str(path))
    cls = _int4_linear_class()
    swapped = 0
    for name, _module in list(_targets(model)):
        if f"{name}.q" not in tensors:
            continue
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        q, scale, zero = (tensors[f"{name}.{key}"] for key in ("q", "scale", "zero"))
        setattr(parent, child, cls(q, scale, zero, tensors.get(f"{name}.bias")))
        swapped += 1
    return swapped
