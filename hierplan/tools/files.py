"""The user's files in (``--file``, the input's ``files``) and a Python step's files out (what it saves under
``out/``): reading and checking them, the short preview the model is shown, and their records in the state.

Standard library only (csv, json): no pandas in the product process.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import mimetypes
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hierplan.config import (ARTIFACT_MAX_BYTES, ARTIFACTS_MAX_BYTES, FILE_MAX_BYTES, FILE_PREVIEW_CHARS,
                             FILE_PREVIEW_ROWS, FILES_MAX_BYTES, JSON_PREVIEW_DEPTH, JSON_PREVIEW_KEYS)
from hierplan.errors import UsageError
from hierplan.records import ArtifactDict, FileDict

MiB = 1024 * 1024


def _mib(n: int) -> str:
    return f"{n / MiB:.1f} MiB"


def media_type(name: str) -> str:
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


def file_record(name: str, data: bytes) -> FileDict:
    """The state's record of one input file (its preview included)."""
    return FileDict(name=name, size=len(data), sha256=hashlib.sha256(data).hexdigest(), media_type=media_type(name),
                    preview=preview(name, data), data=base64.b64encode(data).decode("ascii"))


def load_files(paths: Iterable[str | os.PathLike]) -> list[FileDict]:
    """Read and check the user's files: each is one UsageError line when it does not exist, is a directory (or
    not a regular file), cannot be read, is over config.FILE_MAX_BYTES, shares its name with another, or the
    files together are over config.FILES_MAX_BYTES. Called where a run starts, before any model call."""
    records: list[FileDict] = []
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
        if st.st_size > FILE_MAX_BYTES:
            raise UsageError(f"--file {raw}: {_mib(st.st_size)}; the limit is {_mib(FILE_MAX_BYTES)} per file")
        try:
            with open(path, "rb") as f:
                data = f.read(FILE_MAX_BYTES + 1)  # a file grown since the stat is still caught
        except OSError as exc:
            raise UsageError(f"--file {raw}: cannot be read ({exc.strerror or exc})") from None
        if len(data) > FILE_MAX_BYTES:
            raise UsageError(f"--file {raw}: over the limit of {_mib(FILE_MAX_BYTES)} per file")
        name = os.path.basename(path)
        if any(r["name"] == name for r in records):
            raise UsageError(f"--file {raw}: another file is named {name!r} too; the sandbox sees files by name")
        total += len(data)
        if total > FILES_MAX_BYTES:
            raise UsageError(f"--file {raw}: the files come to {_mib(total)}; the limit is "
                             f"{_mib(FILES_MAX_BYTES)} together")
        records.append(file_record(name, data))
    return records


def file_bytes(record: Mapping[str, Any]) -> bytes:
    """The bytes of a FileDict or an ArtifactDict."""
    return base64.b64decode(record["data"])


def sandbox_data(files: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    """The files as a Python step's sandbox gets them: {name: bytes}, placed read-only under ./data/."""
    return {f["name"]: file_bytes(f) for f in files}


# --- the preview ------------------------------------------------------------------------------------------------


def preview(name: str, data: bytes) -> str:
    """A short description of a file for a prompt: a CSV's columns with their types, first rows and row count; a
    JSON document's top-level structure; a text's first lines; a binary file's size only. Never longer than
    config.FILE_PREVIEW_CHARS."""
    text = _decode(data)
    lower = name.lower()
    if text is None:
        out = f"binary, {len(data):,} bytes"
    elif lower.endswith((".csv", ".tsv")):
        out = _csv_preview(text, "\t" if lower.endswith(".tsv") else ",")
    elif lower.endswith(".json"):
        out = _json_preview(text)
    else:
        lines = text.splitlines()
        out = f"text, {len(lines):,} lines; first lines:\n" + "\n".join(lines[:FILE_PREVIEW_ROWS])
    return out if len(out) <= FILE_PREVIEW_CHARS else out[: FILE_PREVIEW_CHARS - 1] + "…"


def _decode(data: bytes) -> str | None:
    if b"\0" in data[:4096]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _csv_preview(text: str, delimiter: str) -> str:
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    rows = [r for r in rows if r]
    if not rows:
        return "CSV, empty"
    header, body = rows[0], rows[1:]
    columns = ", ".join(f"{h} ({_column_type([r[i] for r in body if i < len(r)])})" for i, h in enumerate(header))
    first = "\n".join(delimiter.join(r) for r in rows[: FILE_PREVIEW_ROWS + 1])
    return f"CSV, {len(body):,} rows; columns: {columns}\nfirst rows:\n{first}"


def _column_type(values: list[str]) -> str:
    values = [v.strip() for v in values if v.strip()]
    if not values:
        return "empty"
    for kind, convert in (("int", int), ("float", float)):
        try:
            for v in values:
                convert(v)
            return kind
        except ValueError:
            continue
    return "text"


def _json_preview(text: str) -> str:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        return f"JSON that does not parse ({exc})"
    return "JSON, " + _shape(doc, depth=0)


def _shape(value: Any, depth: int) -> str:
    if isinstance(value, dict):
        # nested keys too: a list of records is the usual JSON table, and a program needs its field names
        if depth >= JSON_PREVIEW_DEPTH:
            return f"object of {len(value)} keys"
        inner = ", ".join(f"{k!r}: {_shape(v, depth + 1)}" for k, v in list(value.items())[:JSON_PREVIEW_KEYS])
        more = ', …' if len(value) > JSON_PREVIEW_KEYS else ''
        return f"object of {len(value)} keys {{{inner}{more}}}"
    if isinstance(value, list):
        first = f" of {_shape(value[0], depth + 1)}" if value else ""
        return f"list of {len(value):,} items{first}"
    return type(value).__name__ if value is not None else "null"


# --- artifacts out ----------------------------------------------------------------------------------------------


def collect_artifacts(outputs: Mapping[str, bytes], *, used: int = 0, seen: Iterable[tuple[str, str]] = ()
                      ) -> tuple[list[ArtifactDict], list[str]]:
    """The records of what a program saved under out/ ({path under out/: bytes}, as the sandbox gives it back),
    and a line for each file left out: over config.ARTIFACT_MAX_BYTES, or past config.ARTIFACTS_MAX_BYTES with
    the run's ``used`` bytes. A file identical to one in ``seen`` ((name, sha256): an earlier step's program,
    run again first, saved it) is not kept again."""
    kept: list[ArtifactDict] = []
    dropped: list[str] = []
    seen = set(seen)
    for name in sorted(outputs):
        data = outputs[name]
        digest = hashlib.sha256(data).hexdigest()
        if (name, digest) in seen:
            continue
        if len(data) > ARTIFACT_MAX_BYTES:
            dropped.append(f"{name} was not kept: {_mib(len(data))}, over the {_mib(ARTIFACT_MAX_BYTES)} per file")
            continue
        if used + len(data) > ARTIFACTS_MAX_BYTES:
            dropped.append(f"{name} was not kept: the run's saved files would pass {_mib(ARTIFACTS_MAX_BYTES)}")
            continue
        used += len(data)
        kept.append(ArtifactDict(name=name, size=len(data), sha256=digest, media_type=media_type(name),
                                 data=base64.b64encode(data).decode("ascii")))
    return kept, dropped


def run_artifacts(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every artifact of a run's state, in step order, each with its ``step_id``."""
    return [{**a, "step_id": r["step_id"]} for r in values.get("results") or [] for a in r.get("artifacts") or []]


def artifact_listing(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``run_artifacts`` without the bytes (``show --json``'s ``artifacts``)."""
    return [{k: v for k, v in a.items() if k != "data"} for a in run_artifacts(values)]


def save_artifacts(values: Mapping[str, Any], folder: str) -> list[str]:
    """Write a run's artifacts under ``folder`` (step-N/NAME); the paths written."""
    written = []
    for a in run_artifacts(values):
        path = os.path.join(folder, f"step-{a['step_id']}", os.path.normpath(a["name"]))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(file_bytes(a))
        written.append(path)
    return written
