"""bubblewrap command line: fresh namespaces, a read-only view of only what Python needs."""

from __future__ import annotations

import os
import shutil

from .pyenv import PythonLayout

#: Mount points inside the sandbox.
SCRATCH = "/sandbox"
STAGING = "/run/hierplan"
LIB_DIR = os.path.dirname(os.path.abspath(__file__))


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def _parent_dirs(targets: list[str]) -> list[str]:
    """bwrap creates missing parents of mount points as 0700 when run as root, which the
    per-run uid cannot traverse: create every parent explicitly as 0755 (in the sandbox's own
    tmpfs root, not on the host)."""
    parents: set[str] = set()
    for t in targets:
        d = os.path.dirname(t)
        while d not in ("/", ""):
            parents.add(d)
            d = os.path.dirname(d)
    out: list[str] = []
    for d in sorted(parents, key=lambda p: (p.count("/"), p)):
        out += ["--perms", "0755", "--dir", d]
    return out


def build_args(bwrap: str, layout: PythonLayout, *, root: bool, scratch_bytes: int,
               staging: str | None, command: list[str], ro_binds: tuple[tuple[str, str], ...] = (),
               binds: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """The full argv. ``root``: hierplan runs as root, so no user namespace is created (it would
    map the sandbox to host uid 0); the launcher keeps only CAP_SETUID/CAP_SETGID to switch to
    the per-run uid, which clears every capability. Otherwise a user namespace maps the
    caller to uid 65534 with all capabilities dropped. ``ro_binds`` and ``binds`` ((host, inside) pairs) are
    mounted over the scratch tmpfs: the run's data read-only, its out/ folder writable on the host."""
    a = [bwrap, "--die-with-parent", "--new-session"]
    if root:
        a += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
              "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        a += ["--unshare-all", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL"]
    a += ["--hostname", "sandbox"]
    targets = [STAGING, SCRATCH, layout.executable, layout.stdlib, LIB_DIR, *layout.system_lib_dirs, *layout.extra_ro,
               *(os.path.join(layout.site_dir, n) for n, _ in layout.site_items)]
    if layout.libpython:
        targets.append(layout.libpython)
    a += _parent_dirs(targets)
    for link, target in layout.lib_links:
        a += ["--symlink", target, link]
    for d in layout.system_lib_dirs:
        a += ["--ro-bind", d, d]
    for p in layout.extra_ro:
        a += ["--ro-bind-try", p, p]
    a += ["--ro-bind", layout.executable, layout.executable, "--ro-bind", layout.stdlib, layout.stdlib]
    if layout.libpython:
        a += ["--ro-bind", layout.libpython, layout.libpython]
    for name, real in layout.site_items:
        a += ["--ro-bind", real, os.path.join(layout.site_dir, name)]
    a += ["--ro-bind", LIB_DIR, LIB_DIR]
    if staging:
        a += ["--ro-bind", staging, STAGING]
    a += ["--dev", "/dev", "--proc", "/proc",
          "--perms", "1777", "--size", str(scratch_bytes), "--tmpfs", SCRATCH]
    for host, inside in ro_binds:
        a += ["--ro-bind", host, inside]
    for host, inside in binds:
        a += ["--bind", host, inside]
    a += ["--chdir", SCRATCH, "--", *command]
    return a
