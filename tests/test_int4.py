"""int4 weights for 4-bit GGUFs: exact round trip only, the same products as the float weights, the swap."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from hierplan.models import int4  # noqa: E402

needs_kernel = pytest.mark.skipif(not int4.available(), reason="no CPU int4 kernel or no native bf16")


def q4_1_weight(n: int, k: int, seed: int = 0) -> torch.Tensor:
    """A weight as a Q4_1 GGUF dequantizes it: per block of 32, min + step * q, q in 0..15 (both ends used)."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randint(0, 16, (n, k // 32, 32), generator=gen).float()
    q[..., 0], q[..., 1] = 0, 15
    low = torch.randn(n, k // 32, 1, generator=gen) * 0.1
    step = torch.rand(n, k // 32, 1, generator=gen) * 0.02 + 1e-3
    return (low + step * q).reshape(n, k)


def test_importing_does_not_import_torch():
    code = "import hierplan.models.int4, sys; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_q4_1_weight_round_trips_exactly_and_a_float_weight_does_not():
    _, error = int4.quantize(q4_1_weight(64, 96))
    assert error <= int4.EXACT_TOLERANCE
    _, error = int4.quantize(torch.randn(64, 96))
    assert error > 100 * int4.EXACT_TOLERANCE


def test_packing_keeps_every_nibble():
    weight = q4_1_weight(8, 64)
    parts, _ = int4.quantize(weight)
    q = parts["q"]
    unpacked = torch.stack([q & 0xF, q >> 4], dim=-1).reshape(8, 64).float()
    scale = parts["scale"].repeat_interleave(32, dim=1)
    zero = parts["zero"].repeat_interleave(32, dim=1)
    assert torch.allclose((unpacked - 8) * scale + zero, weight, atol=1e-6)


class Tiny(nn.Module):
    """The shape transformers' decoder models have: linears under `.layers.`, a head outside them."""

    def __init__(self, weights: list[torch.Tensor]):
        super().__init__()
        self.layers = nn.ModuleList()
        for w in weights:
            layer = nn.Module()
            layer.proj = nn.Linear(w.shape[1], w.shape[0], bias=False)
            layer.proj.weight.data = w.clone()
            self.layers.append(layer)
        self.lm_head = nn.Linear(weights[-1].shape[0], 10, bias=False)


@needs_kernel
def test_swapped_linears_compute_what_the_float_weights_compute(tmp_path):
    weights = [q4_1_weight(96, 64, seed=1), q4_1_weight(64, 96, seed=2)]
    model = Tiny(weights)
    path = tmp_path / int4.INT4_FILE
    assert int4.save_if_exact(model, path)
    x = torch.randn(3, 5, 64)
    expected = model.layers[1].proj(model.layers[0].proj(x.bfloat16().float()))

    floats = Tiny(weights).to(torch.bfloat16)
    assert int4.apply(floats, path) == 2
    assert type(floats.layers[0].proj).__name__ == "_Int4Linear"
    assert type(floats.lm_head) is nn.Linear  # the tied head is not a 4-bit tensor in the GGUF
    got = floats.layers[1].proj(floats.layers[0].proj(x.bfloat16()))
    assert got.dtype == torch.bfloat16 and got.shape == (3, 5, 64)
    # bf16 activations: within bf16 rounding of the float result.
    assert torch.allclose(got.float(), expected, rtol=0.02, atol=0.02 * expected.abs().max().item())


@needs_kernel
def test_a_linear_the_kernel_cannot_take_keeps_its_float_weight(tmp_path):
    model = Tiny([q4_1_weight(96, 64), q4_1_weight(40, 96)])  # 40 outputs: not a multiple of 16
    path = tmp_path / int4.INT4_FILE
    assert int4.save_if_exact(model, path)
    assert int4.apply(model, path) == 1
    assert type(model.layers[1].proj) is nn.Linear


def test_weights_that_are_not_4_bit_are_left_alone(tmp_path):
    model = Tiny([q4_1_weight(96, 64), torch.randn(64, 96)])
    path = tmp_path / int4.INT4_FILE
    assert not int4.save_if_exact(model, path)
    assert not path.exists()
