"""Which layers this machine supports, probed once per process."""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass, field

from . import bwrap as bw
from . import landlock, seccomp
from .pyenv import python_layout, world_reachable

#: Comma-separated layers to switch off for this process: they are reported as unavailable, as on a
#: machine without them (debugging, and testing that case; never needed normally).
DISABLE_ENV = "HIERPLAN_SANDBOX_DISABLE"


@dataclass(frozen=True)
class Probe:
    available: dict[str, bool]
    reasons: dict[str, str]  # why a layer is missing (or a note on how it is provided)
    root: bool
    uid_without_bwrap: bool
    landlock_abi: int
    bwrap_path: str | None
    disabled: frozenset[str] = field(default_factory=frozenset)


def _probe_bwrap(root: bool) -> tuple[bool, str, str | None]:
    path = bw.find_bwrap()
    if path is None:
        return False, "bwrap not found on PATH (apt-get install bubblewrap)", None
    layout = python_layout()
    argv = bw.build_args(path, layout, root=root, scratch_bytes=1 << 20, staging=None,
                         command=[layout.executable, "-I", "-S", "-c", "pass"])
    try:
        cp = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap failed to start: {exc}", path
    if cp.returncode != 0:
        msg = (cp.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        return False, f"bwrap cannot create the sandbox here: {msg}", path
    return True, f"{path}", path


@functools.lru_cache(maxsize=1)
def probe() -> Probe:
    root = os.geteuid() == 0
    avail: dict[str, bool] = {"rlimits": True, "env": True}
    why: dict[str, str] = {}
    ok, msg, path = _probe_bwrap(root)
    avail["bwrap"] = ok
    why["bwrap"] = msg
    abi = 0
    try:
        abi = landlock.abi_version()
    except OSError as exc:  # pragma: no cover - no libc?
        why["landlock"] = f"cannot query Landlock: {exc}"
    avail["landlock"] = abi >= 1
    if abi >= 1:
        extra = "" if abi >= 6 else " (TCP rules need ABI 4, signal/abstract-socket scoping ABI 6)"
        why["landlock"] = f"ABI {abi}{extra}"
    else:
        why.setdefault("landlock", "kernel without Landlock (needs Linux >= 5.13 with landlock in the LSM list)")
    if not seccomp.kernel_supported():
        avail["seccomp"], why["seccomp"] = False, "kernel without seccomp filter support"
    else:
        try:
            seccomp.load_library()
            avail["seccomp"], why["seccomp"] = True, f"libseccomp ({seccomp.LIBSECCOMP})"
        except OSError as exc:
            avail["seccomp"], why["seccomp"] = False, f"libseccomp not found ({exc}); apt-get install libseccomp2"
    layout = python_layout()
    direct = all(world_reachable(p) for p in (layout.executable, layout.stdlib, *(r for _, r in layout.site_items)))
    if not root:
        avail["uid"], why["uid"] = True, f"hierplan is not root (uid {os.geteuid()})"
    elif avail["bwrap"] or direct:
        avail["uid"] = True
        why["uid"] = "drops to a fresh per-run uid" + (
            "" if direct else f"; only under bwrap: {layout.executable} is not reachable by an unprivileged uid")
    else:
        avail["uid"] = False
        why["uid"] = (f"running as root and {layout.executable} is not reachable by an unprivileged uid "
                      "(a parent directory lacks o+x) and bwrap is unavailable to remount it")
    disabled = frozenset(x.strip() for x in os.environ.get(DISABLE_ENV, "").split(",") if x.strip())
    for name in disabled & (set(avail) - {"rlimits", "env"}):
        # Exactly what a machine without the layer looks like (tests can check that case here).
        avail[name], why[name] = False, f"disabled by {DISABLE_ENV}"
    return Probe(avail, why, root, root and direct and "uid" not in disabled, abi, path, disabled)
