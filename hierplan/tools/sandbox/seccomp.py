"""A seccomp deny-list filter built with libseccomp through ctypes.

Standard library only: the sandbox launcher imports this file by path inside the child. We use
the maintained C library libseccomp (Debian ``libseccomp2``, present on almost every system)
directly. The PyPI binding ``pyseccomp`` has been unmaintained since 2021 and Debian's
``python3-seccomp`` is compiled for the system Python, not for ours; libseccomp's own
``seccomp_rule_add_array`` is a plain C call, so a thin ctypes wrapper is enough and keeps
libseccomp's per-architecture syscall tables.
"""

from __future__ import annotations

import ctypes
import errno
import os

LIBSECCOMP = "libseccomp.so.2"
ACT_ALLOW = 0x7FFF0000
CMP_NE, CMP_EQ, CMP_MASKED_EQ = 1, 4, 7
AF_UNIX = 1
TIOCSTI = 0x5412
CLONE_NS_FLAGS = (0x00020000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                  0x02000000)  # NEWNS, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWCGROUP

#: Syscalls refused with EPERM: kernel attack surface (io_uring, bpf, perf, userfaultfd,
#: keyrings), other processes (ptrace, process_vm_*, pidfd_*), escaping the process group
#: (setsid, setpgid) and reshaping the sandbox (mount family, namespaces, chroot, modules).
DENIED = (
    "io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv",
    "process_vm_writev", "process_madvise", "pidfd_open", "pidfd_getfd", "pidfd_send_signal",
    "mount", "umount2", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "pivot_root", "chroot", "unshare", "setns", "bpf", "perf_event_open",
    "userfaultfd", "keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct",
    "setsid", "setpgid", "open_by_handle_at", "name_to_handle_at", "fanotify_init", "syslog",
    "personality", "quotactl", "lookup_dcookie", "vhangup",
)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def load_library():
    """The libseccomp handle; raises OSError when it is not installed."""
    lib = ctypes.CDLL(LIBSECCOMP, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def kernel_supported() -> bool:
    """True when the kernel has seccomp filter mode (what /proc says; nothing is loaded)."""
    try:
        with open("/proc/self/status") as f:
            return any(line.startswith("Seccomp:") for line in f)
    except OSError:
        return False


def apply(*, allow_unix_sockets: bool) -> int:
    """Install the filter on this process and all its future children; returns rules added.

    Sockets: only AF_UNIX (``socket`` too when ``allow_unix_sockets``, else ``socketpair``
    only); everything else fails with EAFNOSUPPORT/EPERM. ``kill(-1, ...)`` is refused.
    """
    lib = load_library()
    ctx = lib.seccomp_init(ACT_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    count = 0

    def rule(name: str, action: int, *cmps: tuple[int, int, int, int]) -> None:
        nonlocal count
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        if nr < 0:
            return  # syscall unknown on this architecture
        arr = (_ArgCmp * max(1, len(cmps)))(*[_ArgCmp(*c) for c in cmps])
        rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), arr)
        if rc != 0:
            raise OSError(-rc, f"seccomp_rule_add({name}) failed: {os.strerror(-rc)}")
        count += 1

    try:
        eperm = _errno_action(errno.EPERM)
        for name in DENIED:
            rule(name, eperm)
        # glibc falls back to clone() on ENOSYS; clone3 flags live in memory we cannot inspect.
        rule("clone3", _errno_action(errno.ENOSYS))
        for flag in CLONE_NS_FLAGS:
            rule("clone", eperm, (0, CMP_MASKED_EQ, flag, flag))
        noaf = _errno_action(errno.EAFNOSUPPORT)
        if allow_unix_sockets:
            rule("socket", noaf, (0, CMP_NE, AF_UNIX, 0))
        else:
            rule("socket", eperm)
        rule("socketpair", noaf, (0, CMP_NE, AF_UNIX, 0))
        rule("kill", eperm, (0, CMP_MASKED_EQ, 0xFFFFFFFF, 0xFFFFFFFF))  # kill(-1): everyone
        rule("ioctl", eperm, (1, CMP_MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
        rc = lib.seccomp_load(ctx)
        if rc != 0:
            raise OSError(-rc, f"seccomp_load failed: {os.strerror(-rc)}")
    finally:
        lib.seccomp_release(ctx)
    return count
