"""``run_python``: run model-written code under every isolation layer the machine supports."""

from __future__ import annotations

import marshal
import os
import random
import shutil
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, BinaryIO, Literal

from hierplan.errors import IsolationError

from . import bwrap as bw
from . import reaper, runner
from .launcher import MARKER, SETUP_FAILED
from .limits import SandboxLimits
from .probe import probe
from .pyenv import ensure_site_dir, python_layout, read_paths
from .result import ALL_LAYERS, LEVEL_LAYERS, LEVEL_ORDER, ExecutionResult, level_of

LAUNCHER = os.path.join(bw.LIB_DIR, "launcher.py")
#: Layers that are always applied (they cost nothing and need no kernel support).
ALWAYS = frozenset({"rlimits", "env"})
_UID_BASE, _UID_SPAN = 1_900_000_000, 100_000_000
# Each run's directories in $TMPDIR: staging (code, config) and, without bwrap, the code's scratch directory.
STAGING_PREFIX, SCRATCH_PREFIX = "hierplan-sbx-", "hierplan-scratch-"
#: Under the code's working directory: the run's data (read-only) and the folder whose files come back.
DATA_DIR, OUTPUT_DIR = "data", "out"
OUTPUT_PREFIX = "hierplan-out-"
MAX_OUTPUT_FILES = 100
_warned: set[str] = set()
_warn_lock = threading.Lock()


class SandboxSetupError(IsolationError):
    """A layer the probe reported as available failed to apply in the child."""


def _warn_missing(layer: str, reason: str) -> None:
    with _warn_lock:
        if layer in _warned:
            return
        _warned.add(layer)
    warnings.warn(f"hierplan sandbox: layer '{layer}' is not available: {reason}", RuntimeWarning, stacklevel=3)


def plan_layers(layers: Iterable[str] | None = None) -> tuple[set[str], dict[str, str]]:
    """(layers to apply, {wanted but unavailable layer: reason})."""
    p = probe()
    wanted = set(ALL_LAYERS) if layers is None else set(layers)
    unknown = wanted - set(ALL_LAYERS)
    if unknown:
        raise ValueError(f"unknown sandbox layers: {sorted(unknown)}; known: {list(ALL_LAYERS)}")
    wanted |= ALWAYS
    use, missing = set(ALWAYS), {}
    for name in ("bwrap", "landlock", "seccomp"):
        if name in wanted:
            if p.available[name]:
                use.add(name)
            else:
                missing[name] = p.reasons[name]
    if "uid" in wanted:
        if not p.available["uid"]:
            missing["uid"] = p.reasons["uid"]
        elif not p.root or "bwrap" in use or p.uid_without_bwrap:
            use.add("uid")
        else:
            missing["uid"] = "running as root and the interpreter is only reachable by an unprivileged uid under bwrap"
    return use, missing


def _check_files(files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        norm = os.path.normpath(name)
        if not name or os.path.isabs(name) or norm.startswith("..") or norm == ".":
            raise ValueError(f"sandbox file name must be relative and inside the scratch dir: {name!r}")
        if not isinstance(content, (str, bytes)):
            raise TypeError(f"sandbox file {name!r} must be str or bytes, not {type(content).__name__}")


def _write_files(root: str, files: dict[str, str | bytes], owner: int | None, group: int | None = None) -> None:
    for name, content in files.items():
        path = os.path.join(root, os.path.normpath(name))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
    if owner is not None:
        for dirpath, dirs, names in os.walk(root):
            os.chown(dirpath, owner, owner if group is None else group)
            for n in names:
                os.chown(os.path.join(dirpath, n), owner, owner if group is None else group)


def run_python(code: str, *, before: Sequence[str] = (), limits: SandboxLimits | None = None,
               files: dict[str, str | bytes] | None = None,
               data: Mapping[str, bytes | str | os.PathLike] | None = None, collect_outputs: int | None = None,
               save_output: Callable[[str, BinaryIO], Any] | None = None,
               require_isolation: Literal["none", "basic", "full"] | None = None,
               layers: Iterable[str] | None = None) -> ExecutionResult:
    """Run ``code`` in a fresh, isolated interpreter and return what happened.

    ``before``: programs run first in the same interpreter and namespace, their output hidden and a failing
    one skipped, so the names they set exist in ``code`` (a Python step's earlier steps). ``data`` ({name:
    bytes}): files the code reads at ./data/NAME, read-only (a bind mount under bwrap; else files and folder
    owned by hierplan, mode 0444/0555, which the per-run uid cannot change). ``collect_outputs``: a byte limit
    per file; what the code saved under ./out/ comes back in ``outputs`` (regular files only, never followed
    through a link; a larger file is named in ``outputs_skipped`` instead). ``layers``
    (tests, benchmarks) restricts the layers tried; by default all that the machine
    supports. A missing layer is warned about once per process; ``require_isolation`` raises
    :class:`IsolationError` if the resulting level is lower than asked.
    """
    if not isinstance(code, str) or not all(isinstance(program, str) for program in before):
        raise TypeError("code and the programs before it must be str")
    if require_isolation is not None and require_isolation not in LEVEL_ORDER:
        raise ValueError(f"require_isolation must be one of {LEVEL_ORDER}, not {require_isolation!r}")
    limits = limits or SandboxLimits()
    files = dict(files or {})
    _check_files(files)
    data = dict(data or {})
    _check_files({f"{DATA_DIR}/{name}": b"" for name in data})
    if any("/" in name for name in data):
        raise ValueError("data file names must not contain folders")
    for name, value in data.items():
        if not isinstance(value, (bytes, str, os.PathLike)):
            raise TypeError(f"data file {name!r} must be bytes or a path, not {type(value).__name__}")
        if not isinstance(value, bytes) and not os.path.isfile(value):
            raise ValueError(f"data file {name!r}: {os.fspath(value)} is not a file")
    use, missing = plan_layers(layers)
    level = level_of(use)
    if require_isolation and LEVEL_ORDER.index(level) < LEVEL_ORDER.index(require_isolation):
        lacking = sorted(LEVEL_LAYERS[require_isolation] - use)
        detail = "; ".join(f"{n}: {missing.get(n, 'not requested')}" for n in lacking)
        raise IsolationError(f"sandbox isolation '{require_isolation}' required but only '{level}' is "
                             f"available ({detail})")
    if layers is None:
        for name, reason in missing.items():
            _warn_missing(name, reason)
    return _run(code, list(before), limits, files, use, level, data, collect_outputs, save_output)


def _read_outputs(folder: str, cap: int, save: Callable[[str, BinaryIO], Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, int]]:
    """({path under out/: bytes, or what ``save`` made of it}, {path: size} of files over ``cap``): regular files
    only, opened without following a link (the code could leave one to a file only hierplan may read)."""
    kept: dict[str, Any] = {}
    skipped: dict[str, int] = {}
    for root, _dirs, names in os.walk(folder):
        for n in sorted(names):
            path = os.path.join(root, n)
            rel = os.path.relpath(path, folder)
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or len(kept) + len(skipped) >= MAX_OUTPUT_FILES:
                continue
            if st.st_size > cap:
                skipped[rel] = st.st_size
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as f:
                if save is not None:  # the code's processes are gone: the size cannot change while it is read
                    if os.fstat(f.fileno()).st_size > cap:
                        skipped[rel] = os.fstat(f.fileno()).st_size
                    else:
                        kept[rel] = save(rel, f)
                    continue
                content = f.read(cap + 1)
            if len(content) > cap:
                skipped[rel] = len(content)
            else:
                kept[rel] = content
    return kept, skipped


def _place_data(data_dir: str, name: str, source: str, sandbox_uid: int | None, landlock: bool) -> str | None:
    """Put a host file at data_dir/NAME without bwrap, copying it only where nothing else keeps it unchanged.
    Code that runs under a per-run uid gets a hard link (the same inode: hierplan's, mode 0444, which that uid can
    read but not change or chmod), or a copy where the store is on another file system. Code that runs as
    hierplan's own user could chmod a hard link's inode: under Landlock it gets a symlink, and the file is returned
    so that Landlock lets it read that one file (and write none); with neither layer, a copy."""
    target = os.path.join(data_dir, name)
    if sandbox_uid is None and landlock:
        real = os.path.realpath(source)
        os.symlink(real, target)
        return real
    if sandbox_uid is not None:
        try:
            os.link(source, target)
            return None
        except OSError:  # another file system (EXDEV), or links refused: a copy
            pass
    with open(source, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst, 1024 * 1024)  # streamed: never the whole file in memory
    os.chmod(target, 0o444)
    return None


def _run(code: str, before: list[str], limits: SandboxLimits, files: dict[str, str | bytes], use: set[str],
         level: str, data: dict[str, bytes | str | os.PathLike], collect_outputs: int | None,
         save_output: Callable[[str, BinaryIO], Any] | None = None) -> ExecutionResult:
    p = probe()
    layout = python_layout()
    site = ensure_site_dir(layout)
    use_bwrap = "bwrap" in use
    uid = _UID_BASE + random.randrange(_UID_SPAN) if ("uid" in use and p.root) else None
    staging = tempfile.mkdtemp(prefix=STAGING_PREFIX)
    host_scratch = None if use_bwrap else tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
    # Under bwrap the scratch dir is a tmpfs that ends with the run: out/ is a host folder bound over it.
    host_out = tempfile.mkdtemp(prefix=OUTPUT_PREFIX) if use_bwrap and collect_outputs is not None else None
    temporary = [d for d in (staging, host_scratch, host_out) if d]
    outputs: dict[str, Any] = {}
    skipped: dict[str, int] = {}
    written = {n: v for n, v in data.items() if isinstance(v, bytes)}
    linked = {n: os.fspath(v) for n, v in data.items() if not isinstance(v, bytes)}
    data_reads: list[str] = []  # host files the code reads through a symlink (Landlock must allow each)
    try:
        for d in temporary:
            reaper.own_dir(d)  # removed by the reaper if hierplan dies before the finally below
        code_path = os.path.join(staging, "code.py")
        with open(code_path, "w", encoding="utf-8") as f:
            f.write(code)
        inner_staging = bw.STAGING if use_bwrap else staging
        scratch = bw.SCRATCH if use_bwrap else host_scratch
        ro_binds: list[tuple[str, str]] = []
        binds: list[tuple[str, str]] = []
        if use_bwrap:
            _write_files(os.path.join(staging, "files"), files, None)
            if data:
                # the data folder read-only, then each host file read-only over an empty stand-in of its own:
                # the code sees those files, never their folder, and no byte of them is copied
                _write_files(os.path.join(staging, DATA_DIR), {**written, **{n: b"" for n in linked}}, None)
                ro_binds.append((os.path.join(staging, DATA_DIR), os.path.join(bw.SCRATCH, DATA_DIR)))
                ro_binds += [(path, os.path.join(bw.SCRATCH, DATA_DIR, n)) for n, path in linked.items()]
            if host_out:
                if uid is not None:
                    os.chown(host_out, uid, uid)
                binds.append((host_out, os.path.join(bw.SCRATCH, OUTPUT_DIR)))
        else:
            if collect_outputs is not None:
                os.makedirs(os.path.join(host_scratch, OUTPUT_DIR))
            _write_files(host_scratch, files, uid)
            if uid is not None:
                os.chown(host_scratch, uid, uid)
            if data:  # written after the chown: hierplan's files, which the per-run uid can read, not change
                data_dir = os.path.join(host_scratch, DATA_DIR)
                _write_files(data_dir, written, None)
                os.makedirs(data_dir, exist_ok=True)
                for name in written:
                    os.chmod(os.path.join(data_dir, name), 0o444)
                for name, path in linked.items():
                    if (read := _place_data(data_dir, name, path, uid, "landlock" in use)) is not None:
                        data_reads.append(read)
                os.chmod(data_dir, 0o555)
        rl = {
            "RLIMIT_CPU": [limits.cpu_seconds, limits.cpu_seconds + 1],
            "RLIMIT_AS": [limits.memory_bytes, limits.memory_bytes],
            "RLIMIT_FSIZE": [limits.file_size, limits.file_size],
            "RLIMIT_NOFILE": [limits.max_open_files, limits.max_open_files],
            "RLIMIT_CORE": [0, 0],
        }
        if "uid" in use:
            rl["RLIMIT_NPROC"] = [limits.max_processes, limits.max_processes]
        cfg = {
            "code": os.path.join(inner_staging, "code.py"),
            "before": before,
            "lib_dir": bw.LIB_DIR,
            "scratch": scratch,
            "copy_files_from": os.path.join(inner_staging, "files") if use_bwrap and files else None,
            "sys_path": [site],
            "rlimits": rl,
            "setuid": [uid, uid] if uid is not None else None,
            "landlock": ({"read": read_paths(layout) + data_reads, "write": [scratch, "/dev/null"]}
                         if "landlock" in use else None),
            "seccomp": {"allow_unix_sockets": use_bwrap} if "seccomp" in use else None,
            # the launcher's expected parent; under bwrap it is bwrap's init, whose --die-with-parent covers it
            "parent_pid": None if use_bwrap else os.getpid(),
        }
        with open(os.path.join(staging, "config.bin"), "wb") as f:
            marshal.dump(cfg, f)
        if uid is not None:
            # The launcher reads config/code as root without CAP_DAC_OVERRIDE (group 0) and the
            # files after the uid drop (owner); other host users get nothing.
            _write_files(staging, {}, uid, 0)
            os.chmod(staging, 0o750)
        cmd = [layout.executable, "-I", "-S", LAUNCHER, os.path.join(inner_staging, "config.bin")]
        argv = bw.build_args(p.bwrap_path, layout, root=p.root, scratch_bytes=limits.scratch_bytes,
                             staging=staging, command=cmd, ro_binds=tuple(ro_binds),
                             binds=tuple(binds)) if use_bwrap else cmd
        # Under bwrap the pid namespace ends with the run; without it the uid is swept (also when
        # execute raises). Either way the reaper kills both if hierplan dies during the run.
        raw = runner.execute(argv, env=runner.child_env(scratch), cwd=scratch if host_scratch else "/",
                             limits=limits, uid=uid, sweep=not use_bwrap)
        if collect_outputs is not None:  # the run's processes are gone: nothing changes the folder now
            out_dir = host_out or os.path.join(host_scratch, OUTPUT_DIR)
            if os.path.isdir(out_dir) and not os.path.islink(out_dir):
                outputs, skipped = _read_outputs(out_dir, collect_outputs, save_output)
    finally:
        for d in temporary:
            shutil.rmtree(d, ignore_errors=True)
            reaper.release_dir(d)
    stderr = raw.stderr.decode("utf-8", errors="replace")
    if use_bwrap and raw.returncode != 0 and stderr.startswith("bwrap: "):
        raise SandboxSetupError(f"bwrap failed: {stderr.strip().splitlines()[0]}")
    if raw.returncode in (SETUP_FAILED, 128 + SETUP_FAILED) and MARKER in stderr:
        raise SandboxSetupError(stderr[stderr.index(MARKER) + len(MARKER):].strip().splitlines()[0])
    reason, error, rc = runner.classify(raw, limits, signal_from_exit=use_bwrap)
    return ExecutionResult(
        ok=reason == "ok", stdout=raw.stdout.decode("utf-8", errors="replace"), stderr=stderr, error=error,
        exit_reason=reason, returncode=rc, duration_s=round(raw.duration_s, 4),
        isolation=[n for n in ALL_LAYERS if n in use], level=level, outputs=outputs, outputs_skipped=skipped,
    )
