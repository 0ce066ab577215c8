"""Files in from the page: the start form's uploads, read within a size bound, then handed to the run service as
`hierplan run --file` hands it paths (hierplan.tools.files.load_files: its checks, its limits, sha256, the
bytes copied into the run). The uploads are written to a private temporary folder for that, removed as soon
as the run is prepared; load_files' errors name the uploaded file, not the folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request

from hierplan.config import FILE_MAX_BYTES, FILES_MAX_BYTES
from hierplan.errors import UsageError

MiB = 1024 * 1024
MAX_FORM_BYTES = 512 * 1024  # a form's text: a task is at most 20,000 characters, a plan far less
MAX_UPLOAD_BYTES = FILES_MAX_BYTES + MAX_FORM_BYTES
"""A multipart start form, files and fields together: past it, the body is not read further."""
MAX_UPLOADS = 32
MAX_FIELDS = 64
NAME_MAX_BYTES = 255  # a file name on Linux


@dataclass(frozen=True)
class Upload:
    name: str
    """The file's own name, no folders: ./data/NAME in a Python step's sandbox."""
    data: bytes


def is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == "multipart/form-data"


def _too_large() -> UsageError:
    return UsageError(f"the upload is over {MAX_UPLOAD_BYTES / MiB:.1f} MiB; files may be {FILE_MAX_BYTES / MiB:.1f} "
                      f"MiB each, {FILES_MAX_BYTES / MiB:.1f} MiB together")


def _bounded(request: Request) -> Request:
    """The request, its body cut off with a UsageError once past MAX_UPLOAD_BYTES (Content-Length or not)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_UPLOAD_BYTES:
        raise _too_large()
    seen = 0

    async def receive():
        nonlocal seen
        message = await request.receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_UPLOAD_BYTES:
                raise _too_large()
        return message

    return Request(request.scope, receive)


async def multipart_form(request: Request) -> tuple[dict[str, str], list[Upload]]:
    """The start form sent as multipart/form-data: its text fields (as the URL-encoded form's) and its files.
    A file input left empty (no name, no bytes) is no file; a named file of no bytes, or bytes with no usable
    name, is a UsageError, as is a body past MAX_UPLOAD_BYTES or one the parser refuses."""
    try:
        # the whole body is bounded (MAX_UPLOAD_BYTES), a text field with it (Starlette >= 0.40 bounds it to 1 MiB)
        form = await _bounded(request).form(max_files=MAX_UPLOADS, max_fields=MAX_FIELDS)
    except HTTPException as exc:  # the multipart parser's refusals (too many files, a malformed body)
        raise UsageError(f"the form could not be read: {exc.detail}") from None
    try:
        fields: dict[str, str] = {}
        uploads: list[Upload] = []
        for key, value in form.multi_items():
            if isinstance(value, str):
                fields[key] = value
                continue
            data = await value.read()
            if not value.filename and not data:
                continue  # the file input, nothing chosen
            name = upload_name(value.filename or "")
            if not data:
                raise UsageError(f"file {name}: the upload is empty (0 bytes)")
            uploads.append(Upload(name, data))
        return fields, uploads
    finally:
        await form.close()


def upload_name(filename: str) -> str:
    """The uploaded file's own name: the last part of what the browser sent (some send a whole path)."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name:
        raise UsageError("an uploaded file has no name")
    if name in (".", "..") or any(ord(c) < 32 or ord(c) == 127 for c in name) \
            or len(name.encode("utf-8", "replace")) > NAME_MAX_BYTES:
        raise UsageError(f"an uploaded file's name is not usable: {name[:80]!r}")
    return name


@contextmanager
def upload_paths(uploads: Sequence[Upload]) -> Iterator[list[str]]:
    """The uploads as files in a private temporary folder (each in a folder of its own, so two of one name stay
    two and load_files refuses them as it refuses two --file of one name); removed on the way out. A UsageError
    raised inside names the uploaded file where it named its temporary path."""
    if not uploads:
        yield []
        return
    folder = tempfile.mkdtemp(prefix="hierplan-upload-")  # mode 0700: this user's only
    paths = []
    try:
        for i, upload in enumerate(uploads):
            os.mkdir(os.path.join(folder, str(i)), 0o700)
            path = os.path.join(folder, str(i), upload.name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(upload.data)
            paths.append(path)
        try:
            yield paths
        except UsageError as exc:
            message = str(exc)
            for path, upload in zip(paths, uploads):
                message = message.replace(f"--file {path}", f"file {upload.name}").replace(path, upload.name)
            message = message.replace(folder, "…")
            if message == str(exc):
                raise
            raise UsageError(message) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
