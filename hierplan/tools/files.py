"""The user's files in (``--file``, the input's ``files``) and a Python step's files out (what it saves under
``out/``): checking them, copying them into the run's file store (hierplan.store.files: by sha256, streamed, never
read whole), their records in the state (no bytes: name, size, sha256, media type, preview), and reading them
back from the store (the sandbox's data/ folder, ``show --artifacts``, the web page's downloads).

The preview is hierplan.tools.previews' (pandas, imported only when a table is previewed).
"""

from __future__ import annotations

import base64
import mimetypes
import os
import shutil
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hierplan.config import (ARTIFACT_MAX_BYTES, ARTIFACTS_MAX_BYTES, FILE_MAX_BYTES, FILES_MAX_BYTES, MAX_FILE_ENV,
                             MAX_FILES_ENV)
from hierplan.errors import UsageError
from hierplan.records import ArtifactDict, FileDict
from hierplan.store.files import FileStore, StoredFile, process_store
from hierplan.tools.previews import preview, preview_path  # noqa: F401 - preview: re-exported

MiB = 1024 * 1024


def _mib(n: int) -> str:
    return f"{n / MiB:,.1f} MiB"


def media_type(name: str) -> str:
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


def file_limits(max_file_mb: int | None = None, max_files_mb: int | None = None) -> tuple[int, int]:
    """(bytes per file, bytes together) for a run: its own options' (``--max-file-mb``, ``--max-files-mb``), else
    $HIERPLAN_MAX_FILE_MB / $HIERPLAN_MAX_FILES_MB, else config.FILE_MAX_BYTES / FILES_MAX_BYTES."""
    return (_limit(max_file_mb, MAX_FILE_ENV, FILE_MAX_BYTES), _limit(max_files_mb, MAX_FILES_ENV, FILES_MAX_BYTES))


def _limit(given: int | None, env: str, default: int) -> int:
    if given is not None:
        return given * MiB
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(f"${env} must be a whole number of MiB (1 or more), got {raw!r}")
    return int(raw) * MiB


def file_record(name: str, stored: StoredFile, path: str) -> FileDict:
    """The state's record of one input file, its preview read from the store's copy at ``path``."""
    return FileDict(name=name, size=stored.size, sha256=stored.sha256, media_type=media_type(name),
                    preview=preview_path(name, path))


def load_files(paths: Iterable[str | os.PathLike], store: FileStore | None = None, *,
               limits: tuple[int, int] | None = None) -> list[FileDict]:
    """Check the user's files and copy them into ``store`` (default: this process's temporary store): each is one
    UsageError line when it does not exist, is a directory (or not a regular file), is empty, cannot be read, is
    over the limit per file, shares its name with another, or the files together are over their limit
    (``limits``: (per file, together) in bytes, default file_limits()). Everything is checked before anything is
    copied; a file is copied by streaming and hashed on the way. Called where a run starts, before any model call."""
    store = store or process_store()
    per_file, together = limits or file_limits()
    checked: list[tuple[str, str, str]] = []
    total = 0
    for raw in paths:
        path = os.path.expanduser(os.fspath(raw))
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise UsageError(f"--file {raw}: no such file") from None
        except OSError as exc:
            raise UsageError(f"--file {raw}: cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"--file {raw}: is a directory; give the files in it one by one")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"--file {raw}: not a regular file")
        if st.st_size == 0:
            raise UsageError(f"--file {raw}: the file is empty (0 bytes)")
        if st.st_size > per_file:
            raise UsageError(f"--file {raw}: {_mib(st.st_size)}; the limit is {_mib(per_file)} per file "
                             f"(--max-file-mb, ${MAX_FILE_ENV})")
        if not os.access(path, os.R_OK):
            raise UsageError(f"--file {raw}: cannot be read (permission denied)")
        name = os.path.basename(path)
        if any(n == name for n, _, _ in checked):
            raise UsageError(f"--file {raw}: another file is named {name!r} too; the sandbox sees files by name")
        total += st.st_size
        if total > together:
            raise UsageError(f"--file {raw}: the files come to {_mib(total)}; the limit is {_mib(together)} "
                             f"together (--max-files-mb, ${MAX_FILES_ENV})")
        checked.append((name, path, str(raw)))
    records: list[FileDict] = []
    for name, path, raw in checked:
        try:
            stored = store.put_path(path, limit=per_file)  # a file grown since the stat is still caught
        except OverflowError:
            raise UsageError(f"--file {raw}: over the limit of {_mib(per_file)} per file") from None
        except OSError as exc:
            raise UsageError(f"--file {raw}: cannot be read ({exc.strerror or exc})") from None
        records.append(file_record(name, stored, store.local_path(stored.sha256, name)))
    return records


def local_path(record: Mapping[str, Any], store: FileStore) -> str:
    """Where a FileDict's or an ArtifactDict's bytes can be read on this machine: the store's copy, checked against
    its sha256 (a FileStoreError naming the file when it is gone or changed). A record of a run made before the
    file store (its bytes in the state, base64) is copied into the store first."""
    if "data" in record:
        stored = store.put_bytes(base64.b64decode(record["data"]))
        return store.local_path(stored.sha256, record["name"])
    return store.local_path(record["sha256"], record["name"])


def sandbox_data(files: Sequence[Mapping[str, Any]], store: FileStore) -> dict[str, str]:
    """The files as a Python step's sandbox gets them: {name: path of the store's copy}, placed read-only under
    ./data/ (hierplan.tools.run_python's ``data``)."""
    return {f["name"]: local_path(f, store) for f in files}


def check_files(files: Sequence[Mapping[str, Any]], store: FileStore) -> None:
    """Every file of a run is in ``store`` with its bytes intact (a FileStoreError line naming the first that is
    not): checked before a stopped run goes on, which then copies nothing again."""
    for f in files:
        local_path(f, store)


# --- artifacts out ----------------------------------------------------------------------------------------------


def collect_artifacts(outputs: Mapping[str, bytes | StoredFile], store: FileStore, *, used: int = 0,
                      seen: Iterable[tuple[str, str]] = ()) -> tuple[list[ArtifactDict], list[str]]:
    """The records of what a program saved under out/ ({path under out/: its bytes, or the StoredFile the sandbox
    already copied it into ``store`` as}), and a line for each file left out: over config.ARTIFACT_MAX_BYTES, or
    past config.ARTIFACTS_MAX_BYTES with the run's ``used`` bytes. A file identical to one in ``seen`` ((name,
    sha256): an earlier step's program, run again first, saved it) is not kept again."""
    kept: list[ArtifactDict] = []
    dropped: list[str] = []
    seen = set(seen)
    for name in sorted(outputs):
        value = outputs[name]
        if isinstance(value, (bytes, bytearray)):
            if len(value) > ARTIFACT_MAX_BYTES:
                dropped.append(f"{name} was not kept: {_mib(len(value))}, over the {_mib(ARTIFACT_MAX_BYTES)} "
                               "per file")
                continue
            value = store.put_bytes(bytes(value))
        if (name, value.sha256) in seen:
            continue
        if value.size > ARTIFACT_MAX_BYTES:
            dropped.append(f"{name} was not kept: {_mib(value.size)}, over the {_mib(ARTIFACT_MAX_BYTES)} per file")
            continue
        if used + value.size > ARTIFACTS_MAX_BYTES:
            dropped.append(f"{name} was not kept: the run's saved files would pass {_mib(ARTIFACTS_MAX_BYTES)}")
            continue
        used += value.size
        kept.append(ArtifactDict(name=name, size=value.size, sha256=value.sha256, media_type=media_type(name)))
    return kept, dropped


def run_artifacts(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every artifact of a run's state, in step order, each with its ``step_id`` (a run made before the file
    store may still hold a ``data`` field: local_path reads it)."""
    return [{**a, "step_id": r["step_id"]} for r in values.get("results") or [] for a in r.get("artifacts") or []]


def artifact_listing(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``run_artifacts`` as ``show --json`` lists them: records only, never bytes."""
    return [{k: v for k, v in a.items() if k != "data"} for a in run_artifacts(values)]


def save_artifacts(values: Mapping[str, Any], folder: str, store: FileStore) -> list[str]:
    """Copy a run's artifacts from ``store`` under ``folder`` (step-N/NAME); the paths written."""
    written = []
    for a in run_artifacts(values):
        path = os.path.join(folder, f"step-{a['step_id']}", os.path.normpath(a["name"]))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copyfile(local_path(a, store), path)
        written.append(path)
    return written
