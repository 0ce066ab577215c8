"""Landlock (filesystem, TCP and scope) through raw syscalls with ctypes.

Standard library only: the sandbox launcher imports this file by path inside the child, before
the user's code runs, so it must not import hierplan. There is no maintained Python binding for
Landlock on PyPI or Debian; the ABI is three syscalls with fixed numbers on every architecture.
"""

from __future__ import annotations

import ctypes
import os

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# Filesystem access rights, with the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_ABI1 = (1 << 13) - 1
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = EXECUTE | READ_FILE | READ_DIR
# Network (ABI 4) and scopes (ABI 6).
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """Landlock ABI of the running kernel; 0 when Landlock is unsupported or disabled."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    v = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                     ctypes.c_uint32(CREATE_RULESET_VERSION))
    return int(v) if v > 0 else 0


def handled_fs(abi: int) -> int:
    access = FS_ABI1
    if abi >= 2:
        access |= REFER
    if abi >= 3:
        access |= TRUNCATE
    if abi >= 5:
        access |= IOCTL_DEV
    return access


def apply(read: list[str], write: list[str], *, abi: int | None = None) -> list[str]:
    """Restrict this process (and future children) to reading ``read`` and writing ``write``.

    TCP bind/connect are denied entirely (ABI >= 4); signals to processes outside the domain
    and connections to abstract unix sockets outside it are denied (ABI >= 6). Missing paths
    are skipped. Returns the features applied, e.g. ["fs", "tcp", "scope"].
    """
    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise OSError("Landlock is not supported by this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    fs = handled_fs(abi)
    attr = _RulesetAttr(fs, 0, 0)
    size = 8
    applied = ["fs"]
    if abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
        applied.append("tcp")
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL
        size = 24
        applied.append("scope")
    rfd = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                       ctypes.c_uint32(0))
    if rfd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for paths, access in ((read, READ & fs), (write, fs)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    allowed = access if os.path.isdir(path) else access & FILE_ONLY
                    rule = _PathBeneath(allowed, fd)
                    if libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(rfd),
                                    ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule),
                                    ctypes.c_uint32(0)) != 0:
                        raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
                finally:
                    os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(rfd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(rfd)
    return applied
