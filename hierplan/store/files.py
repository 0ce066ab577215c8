"""The file store: the bytes of a run's files (the user's, and what its Python steps saved under out/), kept once
by sha256 beside the run database, so that the checkpointed state holds only each file's name, size, sha256,
media type and preview, and a file of any size is copied once, whatever the number of checkpoints.

Where the bytes live (``open_file_store(db)``, one place for every entry point):

- a SQLite database PATH: the folder ``PATH.files/`` next to it, one file per sha256 (``ab/abcdef...``);
- Postgres: a table in the same database (hierplan.store.postgres.PostgresFileStore), read back into a local
  cache folder by hash (config.file_cache_dir()), so a run resumed on another machine finds its files;
- ``:memory:``: a temporary folder of this process, removed when it exits.

Files go in by streaming (hashed while copied, never read whole into memory) and come out as a local path, which
the sandbox mounts read-only. A file whose bytes no longer match its sha256, or that is gone, is a FileStoreError
naming it: one line, the run stops there and can be resumed once the file is back.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import tempfile
import threading
from typing import BinaryIO, NamedTuple

from hierplan.config import FILE_STORE_CHUNK_BYTES
from hierplan.errors import HierplanError

STORE_SUFFIX = ".files"
"""A SQLite database PATH keeps its files in PATH + this."""
STAGING = "incoming"
"""The store's own folder for files being copied in (renamed into place once hashed: never half a file)."""
FILE_MODE = 0o444  # read-only for everyone: the sandbox's per-run uid reads a stored file, nobody writes it
FOLDER_MODE = 0o700  # the user's data: only the user lists the store


class FileStoreError(HierplanError):
    """A run's stored file is missing or its bytes no longer match its sha256 (one line naming the file)."""


class StoredFile(NamedTuple):
    """What the store gives back for a file put in."""

    sha256: str
    size: int


def short(sha256: str) -> str:
    return sha256[:12]


# (path, inode, size, mtime) of files whose sha256 this process has read or written: each is hashed once
# per process, however many steps use it (a resumed run hashes its files once, then trusts them while unchanged).
_verified: set[tuple] = set()
_verified_lock = threading.Lock()


def _identity(path: str) -> tuple:
    st = os.stat(path)
    # not ctime: each hard link into a sandbox changes it, and the bytes with it would be hashed again every step
    return (path, st.st_ino, st.st_size, st.st_mtime_ns)


def _mark_verified(path: str) -> None:
    with _verified_lock:
        _verified.add(_identity(path))


def copy_hashing(source: BinaryIO, target: BinaryIO, limit: int | None = None) -> StoredFile:
    """Copy ``source`` into ``target`` in chunks, hashing as it goes; past ``limit`` bytes it stops and raises
    OverflowError (the caller says which limit)."""
    digest = hashlib.sha256()
    size = 0
    while chunk := source.read(FILE_STORE_CHUNK_BYTES):
        size += len(chunk)
        if limit is not None and size > limit:
            raise OverflowError(size)
        digest.update(chunk)
        target.write(chunk)
    return StoredFile(digest.hexdigest(), size)


def hash_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(FILE_STORE_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


class FileStore:
    """Files by sha256. ``put_stream`` / ``put_path`` / ``put_bytes`` copy a file in (once: a file already there
    is not written again); ``local_path`` gives a verified local path to read it from (``name``: the file's name in
    the run, for the error)."""

    location: str
    """Where the bytes are, as messages name it."""

    def put_stream(self, source: BinaryIO, limit: int | None = None) -> StoredFile:
        raise NotImplementedError

    def local_path(self, sha256: str, name: str) -> str:
        raise NotImplementedError

    def has(self, sha256: str) -> bool:
        raise NotImplementedError

    def put_path(self, path: str, limit: int | None = None) -> StoredFile:
        with open(path, "rb") as f:
            return self.put_stream(f, limit)

    def put_bytes(self, data: bytes) -> StoredFile:
        import io

        return self.put_stream(io.BytesIO(data))

    def read_bytes(self, sha256: str, name: str) -> bytes:
        """A small file's bytes (tests, previews of tiny files); anything large is read from ``local_path``."""
        with open(self.local_path(sha256, name), "rb") as f:
            return f.read()

    def save_output(self, name: str, source: BinaryIO) -> StoredFile:
        """A sandbox's saved file (hierplan.tools.run_python's ``save_output``): copied in as it is read."""
        return self.put_stream(source)


class LocalFileStore(FileStore):
    """A folder: ``root/ab/abcdef...`` per file, written once through ``root/incoming/`` and renamed into place."""

    def __init__(self, root: str):
        self.root = os.path.abspath(os.path.expanduser(root))
        self.location = self.root

    def path_of(self, sha256: str) -> str:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError(f"not a sha256: {sha256!r}")  # a record's hash never names a path of its own
        return os.path.join(self.root, sha256[:2], sha256)

    def has(self, sha256: str) -> bool:
        return os.path.isfile(self.path_of(sha256))

    def incoming_folder(self) -> str:
        """Where files being copied in are written (in the store's own folder: renamed into place on one file system)."""
        incoming = os.path.join(self.root, STAGING)
        if not os.path.isdir(incoming):
            os.makedirs(incoming, mode=FOLDER_MODE, exist_ok=True)
            os.chmod(self.root, FOLDER_MODE)  # makedirs' mode is the umask's for the store itself
        return incoming

    def put_stream(self, source: BinaryIO, limit: int | None = None) -> StoredFile:
        fd, tmp = tempfile.mkstemp(dir=self.incoming_folder(), prefix="in-")
        try:
            with os.fdopen(fd, "wb") as target:
                stored = copy_hashing(source, target, limit)
            self.adopt(tmp, stored)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return stored

    def adopt(self, tmp: str, stored: StoredFile) -> None:
        """Move a file copied in (``tmp``, in this store's folder) into place, unless its bytes are there already:
        a stored file is never rewritten, so it keeps its inode and mtime."""
        final = self.path_of(stored.sha256)
        try:
            st = os.stat(final)
            if stat.S_ISREG(st.st_mode) and st.st_size == stored.size:
                return  # left in place: the tmp copy is removed by the caller
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(final), mode=FOLDER_MODE, exist_ok=True)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, final)
        _mark_verified(final)

    def local_path(self, sha256: str, name: str) -> str:
        path = self.path_of(sha256)
        try:
            if stat.S_IMODE(os.stat(path).st_mode) != FILE_MODE:
                try:
                    os.chmod(path, FILE_MODE)  # made writable by someone (its bytes are checked below)
                except PermissionError:
                    pass  # another user's store: read-only to this one anyway
            key = _identity(path)
        except FileNotFoundError:
            raise FileStoreError(f"file {name} (sha256 {short(sha256)}…) is missing from the file store "
                                 f"{self.location}; the run cannot go on without it") from None
        with _verified_lock:
            known = key in _verified
        if not known:
            if hash_file(path) != sha256:
                raise FileStoreError(f"file {name}: its stored copy {path} no longer matches its sha256 "
                                     f"({short(sha256)}…); it was changed or damaged, and the run cannot use it")
            with _verified_lock:
                _verified.add(key)
        return path


_process_store: LocalFileStore | None = None
_process_lock = threading.Lock()


def process_store() -> LocalFileStore:
    """This process's temporary store (runs without a database: ``:memory:``, the eval's default, tests), removed
    when the process exits."""
    global _process_store
    with _process_lock:
        if _process_store is None:
            # made on the first file put in (a graph that is only drawn leaves nothing behind)
            root = os.path.join(tempfile.gettempdir(), f"hierplan-files-{os.getpid()}-{os.urandom(4).hex()}")
            atexit.register(_remove_if_ours, root, os.getpid())
            _process_store = LocalFileStore(root)
        return _process_store


def _remove_if_ours(root: str, pid: int) -> None:
    if os.getpid() == pid:  # a forked child inherits the exit hook, not the store
        shutil.rmtree(root, ignore_errors=True)


def sqlite_store(path: str) -> FileStore:
    """The store of a SQLite database ``path``: PATH.files/ next to it (the process's for ``:memory:``)."""
    if path == ":memory:":
        return process_store()
    return LocalFileStore(os.path.expanduser(path) + STORE_SUFFIX)
