"""Files in from the page: the start form's uploads, streamed to a private temporary folder as they are parsed
(Starlette spools each part to disk past 1 MiB; it is copied on in chunks, never held whole in memory), then
handed to the run service as `hierplan run --file` hands it paths (hierplan.tools.files.load_files: its checks,
its limits, sha256, the bytes copied into the file store). The folder is removed as soon as the run is prepared;
load_files' errors name the uploaded file, not the folder.
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

from hierplan.errors import UsageError

MiB = 1024 * 1024
MAX_FORM_BYTES = 512 * 1024  # a form's text: a task is at most 20,000 characters, a plan far less
COPY_CHUNK_BYTES = 1 * MiB
MAX_UPLOADS = 32
MAX_FIELDS = 64
NAME_MAX_BYTES = 255  # a file name on Linux


@dataclass(frozen=True)
class Upload:
    name: str
    """The file's own name, no folders: ./data/NAME in a Python step's sandbox."""
    path: str
    """Where it was written, in the upload's private folder."""


def upload_limit(limits: tuple[int, int]) -> int:
    """A multipart start form's bound, files and fields together, for the server's (per file, together) file
    limits: past it, the body is not read further."""
    return limits[1] + MAX_FORM_BYTES


def is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == "multipart/form-data"


def _too_large(limits: tuple[int, int]) -> UsageError:
    return UsageError(f"the upload is over {upload_limit(limits) / MiB:,.1f} MiB; files may be "
                      f"{limits[0] / MiB:,.1f} MiB each, {limits[1] / MiB:,.1f} MiB together")


def _bounded(request: Request, limits: tuple[int, int]) -> Request:
    """The request, its body cut off with a UsageError once past upload_limit (Content-Length or not)."""
    bound = upload_limit(limits)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > bound:
        raise _too_large(limits)
    seen = 0

    async def receive():
        nonlocal seen
        message = await request.receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > bound:
                raise _too_large(limits)
        return message

    return Request(request.scope, receive)


async def multipart_form(request: Request, folder: str, limits: tuple[int, int]
                         ) -> tuple[dict[str, str], list[Upload]]:
    """The start form sent as multipart/form-data: its text fields (as the URL-encoded form's) and its files,
    each written to a folder of its own in ``folder`` (upload_folder), so two of one name stay two and load_files
    refuses them as it refuses two --file of one name. A file input left empty (no name, no bytes) is no file; a
    named file of no bytes, or bytes with no usable name, is a UsageError, as is a body past upload_limit or one
    the parser refuses."""
    try:
        # the whole body is bounded (upload_limit), a text field with it (Starlette >= 0.40 bounds it to 1 MiB)
        form = await _bounded(request, limits).form(max_files=MAX_UPLOADS, max_fields=MAX_FIELDS)
    except HTTPException as exc:  # the multipart parser's refusals (too many files, a malformed body)
        raise UsageError(f"the form could not be read: {exc.detail}") from None
    try:
        fields: dict[str, str] = {}
        uploads: list[Upload] = []
        for key, value in form.multi_items():
            if isinstance(value, str):
                fields[key] = value
                continue
            first = await value.read(COPY_CHUNK_BYTES)
            if not value.filename and not first:
                continue  # the file input, nothing chosen
            name = upload_name(value.filename or "")
            if not first:
                raise UsageError(f"file {name}: the upload is empty (0 bytes)")
            own = os.path.join(folder, str(len(uploads)))
            os.mkdir(own, 0o700)
            path = os.path.join(own, name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                chunk = first
                while chunk:
                    f.write(chunk)
                    chunk = await value.read(COPY_CHUNK_BYTES)
            uploads.append(Upload(name, path))
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
def upload_folder() -> Iterator[str]:
    """A private temporary folder (mode 0700: this user's only) for a start form's uploads, removed on the way out."""
    folder = tempfile.mkdtemp(prefix="hierplan-upload-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def upload_errors(uploads: Sequence[Upload], folder: str) -> Iterator[None]:
    """A UsageError raised inside names the uploaded file where it named its temporary path."""
    try:
        yield
    except UsageError as exc:
        message = str(exc)
        for upload in uploads:
            message = message.replace(f"--file {upload.path}", f"file {upload.name}").replace(upload.path, upload.name)
        message = message.replace(folder, "…")
        if message == str(exc):
            raise
        raise UsageError(message) from None
