"""Which interpreter, libraries and site-packages the sandboxed code may see."""

from __future__ import annotations

import atexit
import functools
import importlib.metadata as md
import os
import re
import shutil
import stat
import sys
import sysconfig
import tempfile
from dataclasses import dataclass

#: Third-party distributions importable in the sandbox, with their installed dependencies.
ALLOWED_PACKAGES: tuple[str, ...] = ("numpy", "pandas", "matplotlib", "scipy", "scikit-learn")
#: Where the allowed packages appear inside the child (a bind target under bwrap; a directory of
#: symlinks on the host otherwise). Fixed per process so both modes share one path.
SITE_PREFIX = "hierplan-sandbox-site-"
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class PythonLayout:
    executable: str
    stdlib: str
    libpython: str | None
    system_lib_dirs: tuple[str, ...]
    lib_links: tuple[tuple[str, str], ...]  # (/lib64, "usr/lib64") for merged-/usr systems
    extra_ro: tuple[str, ...]  # ld.so.cache, zoneinfo: read-only, optional
    site_items: tuple[tuple[str, str], ...]  # (name in site dir, real path)
    site_dir: str


def _closure(names: tuple[str, ...]) -> list[md.Distribution]:
    seen: dict[str, md.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        seen[key] = dist
        for req in dist.requires or ():
            if ";" in req and "extra" in req.split(";", 1)[1]:
                continue
            m = _REQ_NAME.match(req)
            if m:
                todo.append(m.group(1))
    return list(seen.values())


def _site_items() -> list[tuple[str, str]]:
    items: dict[str, str] = {}
    for dist in _closure(ALLOWED_PACKAGES):
        for f in dist.files or ():
            top = f.parts[0]
            if top in ("..", "__pycache__") or top.endswith(".pth"):
                continue
            path = os.path.realpath(str(dist.locate_file(top)))
            if os.path.exists(path) and not path.startswith(sys.prefix + os.sep + "bin"):
                items.setdefault(top, path)
    return sorted(items.items())


@functools.lru_cache(maxsize=1)
def python_layout() -> PythonLayout:
    exe = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    libpython = None
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        cand = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or "")
        libpython = os.path.realpath(cand) if os.path.isfile(cand) else None
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    lib_dirs: list[str] = []
    links: list[tuple[str, str]] = []
    for d in ("/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(d):
            links.append((d, os.readlink(d)))
        elif os.path.isdir(d):
            lib_dirs.append(d)
    for d in (f"/usr/lib/{multiarch}" if multiarch else "/usr/lib", "/usr/lib64"):
        if os.path.isdir(d) and d not in lib_dirs:
            lib_dirs.append(d)
    extra = tuple(p for p in ("/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo") if os.path.exists(p))
    site_dir = os.path.join(tempfile.gettempdir(), f"{SITE_PREFIX}{os.getpid()}")
    return PythonLayout(exe, stdlib, libpython, tuple(lib_dirs), tuple(links), extra,
                        tuple(_site_items()), site_dir)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def sweep_stale_site_dirs(parent: str) -> list[str]:
    """Remove site directories left by processes that died without running atexit (SIGKILL, os._exit).
    They hold only symlinks, but a long-lived machine would collect one per killed run."""
    removed = []
    for name in os.listdir(parent):
        pid = name.removeprefix(SITE_PREFIX)
        if name.startswith(SITE_PREFIX) and pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            path = os.path.join(parent, name)
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.exists(path):
                removed.append(path)
    return removed


def ensure_site_dir(layout: PythonLayout) -> str:
    """Create (once) the host directory of symlinks to the allowed packages."""
    d = layout.site_dir
    if not os.path.isdir(d):
        sweep_stale_site_dirs(os.path.dirname(d))
        tmp = tempfile.mkdtemp(prefix=SITE_PREFIX, dir=os.path.dirname(d))
        for name, real in layout.site_items:
            os.symlink(real, os.path.join(tmp, name))
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, d)
            atexit.register(shutil.rmtree, d, True)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another thread won
    return d


def world_reachable(path: str) -> bool:
    """True when an unprivileged uid can traverse to ``path`` and read it."""
    path = os.path.realpath(path)
    parts = path.split(os.sep)
    for i in range(2, len(parts)):
        st = os.stat(os.sep.join(parts[:i]) or "/")
        if not st.st_mode & stat.S_IXOTH:
            return False
    return bool(os.stat(path).st_mode & stat.S_IROTH)


def read_paths(layout: PythonLayout) -> list[str]:
    """Everything the child may read (Landlock rules; bwrap binds the same paths)."""
    paths = [layout.executable, layout.stdlib, *layout.system_lib_dirs, *layout.extra_ro, layout.site_dir]
    if layout.libpython:
        paths.append(layout.libpython)
    paths += [real for _, real in layout.site_items]
    return paths + ["/dev/urandom", "/dev/zero"]
