"""NLTK's punkt_tab tokenizer data for IFEval's checkers (bench-only), taken from the llama-index-core wheel on
PyPI, which carries it: NLTK's own download host is not reachable here. Unpacked into <venv>/share/nltk_data,
where bench/ifeval_checkers.py points NLTK_DATA."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "llama-index-core==0.14.25"
INSIDE = "llama_index/core/_static/nltk_cache/tokenizers/punkt_tab/"
TARGET = Path(sys.prefix) / "share" / "nltk_data" / "tokenizers" / "punkt_tab"


def main() -> int:
    if (TARGET / "english").is_dir():
        print(f"punkt_tab: already in {TARGET}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", tmp, WHEEL], check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.startswith(INSIDE) and not name.endswith("/"):
                    dest = TARGET / name[len(INSIDE):]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(archive.read(name))
    print(f"punkt_tab: unpacked into {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
