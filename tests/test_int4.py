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


def count_kernel_calls(monkeypatch) -> list:
    calls = []
    real = torch._weight_int4pack_mm_for_cpu

    def counting(x, *args):
        calls.append(x.shape[0])
        return real(x, *args)

    monkeypatch.setattr(torch, "_weight_int4pack_mm_for_cpu", counting)
    return calls


@needs_kernel
@pytest.mark.parametrize("rows", [1, 3, int4.FLOAT_ROWS - 1, int4.FLOAT_ROWS, 40])
def test_swapped_linears_compute_what_the_float_weights_compute(tmp_path, monkeypatch, rows):
    weights = [q4_1_weight(96, 64, seed=1), q4_1_weight(64, 96, seed=2)]
    model = Tiny(weights)
    path = tmp_path / int4.INT4_FILE
    assert int4.save_if_exact(model, path)
    x = torch.randn(rows, 64)
    expected = model.layers[1].proj(model.layers[0].proj(x.bfloat16().float()))

    floats = Tiny(weights).to(torch.bfloat16)
    assert int4.apply(floats, path) == 2
    assert type(floats.layers[0].proj).__name__ == "_Int4Linear"
    assert type(floats.lm_head) is nn.Linear  # the tied head is not a 4-bit tensor in the GGUF
    calls = count_kernel_calls(monkeypatch)
    got = floats.layers[1].proj(floats.layers[0].proj(x.bfloat16()))
    assert got.dtype == torch.bfloat16 and got.shape == (rows, 64)
    # Few rows (decode) go through the int4 kernel, many (prefill) through the float weight.
    assert calls == ([rows, rows] if rows < int4.FLOAT_ROWS else [])
    # bf16 activations: within bf16 rounding of the float result.
    assert torch.allclose(got.float(), expected, rtol=0.02, atol=0.02 * expected.abs().max().item())


@needs_kernel
def test_the_kernel_form_is_stored_and_reused(tmp_path, monkeypatch):
    weights = [q4_1_weight(96, 64, seed=1), q4_1_weight(64, 96, seed=2)]
    path = tmp_path / int4.INT4_FILE
    assert int4.save_if_exact(Tiny(weights), path)
    first = Tiny(weights).to(torch.bfloat16)
    assert int4.apply(first, path) == 2
    kernel = tmp_path / int4.KERNEL_FILE
    assert kernel.is_file()

    def no_repacking(*args):
        raise AssertionError("the stored kernel form should have been used")

    monkeypatch.setattr(int4, "kernel_form", no_repacking)
    second = Tiny(weights).to(torch.bfloat16)
    assert int4.apply(second, path) == 2
    x = torch.randn(2, 64).bfloat16()
    assert torch.equal(second.layers[0].proj(x), first.layers[0].proj(x))


@needs_kernel
@pytest.mark.parametrize("damage", ["other torch", "truncated", "unwritable"])
def test_a_kernel_form_this_torch_cannot_use_is_rebuilt(tmp_path, damage):
    from safetensors import safe_open
    from safetensors.torch import save_file

    weights = [q4_1_weight(96, 64, seed=1), q4_1_weight(64, 96, seed=2)]
    path = tmp_path / int4.INT4_FILE
    assert int4.save_if_exact(Tiny(weights), path)
    reference = Tiny(weights).to(torch.bfloat16)
    int4.apply(reference, path)
    kernel = tmp_path / int4.KERNEL_FILE
    if damage == "other torch":  # packed by a torch whose layout differs: same keys, other bytes
        with safe_open(str(kernel), framework="pt") as handle:
            tensors = {key: torch.zeros_like(handle.get_tensor(key)) for key in handle.keys()}
        save_file(tensors, str(kernel), metadata={"fingerprint": "torch 0.0 on another CPU"})
    elif damage == "truncated":
        kernel.write_bytes(kernel.read_bytes()[:1000])
    else:  # a directory in its place: it can be neither read nor replaced
        kernel.unlink()
        kernel.mkdir()

    model = Tiny(weights).to(torch.bfloat16)
    assert int4.apply(model, path) == 2
    x = torch.randn(2, 64).bfloat16()
    assert torch.equal(model.layers[0].proj(x), reference.layers[0].proj(x))
    if damage != "unwritable":
        with safe_open(str(kernel), framework="pt") as handle:
            assert handle.metadata()["fingerprint"] == int4.kernel_fingerprint({(96, 64), (64, 96)})


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
