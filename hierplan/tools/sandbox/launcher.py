"""Runs inside the sandboxed child, before the user's code: applies the in-process layers.

Started as ``python -I -S launcher.py CONFIG START_FD``. Standard library only (it cannot import
hierplan). Order: rlimits, uid drop, parent-death signal, scratch files, Landlock, seccomp, the
start byte, then ``exec`` of the ``before`` programs (output hidden, failures skipped) and of the
code in one fresh ``__main__`` namespace, so every restriction is in force before any user byte
runs (``import ctypes`` in user code then meets the filters already installed).

Dying with the run: ``PR_SET_PDEATHSIG`` (SIGKILL) is set after the uid drop (a credential
change clears it), then ``getppid()`` is compared with hierplan's pid: if hierplan died before
the signal was armed, nobody would send it. The code starts only once hierplan has written one
byte to START_FD, which it does after registering this process group with its reaper
(reaper.py): what the code forks is then killed by the reaper if hierplan dies. EOF instead of
the byte means hierplan died first.
"""

import marshal
import os
import resource
import sys

SETUP_FAILED = 125
MARKER = "hierplan-sandbox-setup-failed: "
PR_SET_PDEATHSIG = 1
SIGKILL = 9
START = b"g"
PROGRAM_FILENAME = "<code>"  # the user's program in tracebacks (runner.error_report looks for it)


def _load(lib_dir, name):
    # A plain import from lib_dir reuses the __pycache__ the parent wrote (compiling the
    # source on every run would cost milliseconds); the names leave sys.modules afterwards.
    sys.path.insert(0, lib_dir)
    try:
        __import__(name)
        return sys.modules.pop(name)
    finally:
        sys.path.remove(lib_dir)
        sys.path_importer_cache.pop(lib_dir, None)


def _die_with_parent(parent_pid):
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    # Under bwrap the parent is bwrap's own init (its --die-with-parent covers this step); else hierplan.
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(SETUP_FAILED)  # hierplan died before the signal was armed: nobody is waiting


def _wait_for_start(fd):
    try:
        byte = os.read(fd, 1)
    finally:
        os.close(fd)
    if byte != START:  # EOF: hierplan died (or failed) before registering this run with its reaper
        raise OSError("hierplan went away before the code could start")


def _setup(cfg):
    with open(cfg["code"], encoding="utf-8") as f:
        code = f.read()
    landlock = _load(cfg["lib_dir"], "landlock") if cfg.get("landlock") else None
    seccomp = _load(cfg["lib_dir"], "seccomp") if cfg.get("seccomp") else None
    if seccomp is not None:
        seccomp.load_library()  # dlopen before Landlock narrows what can be read
    for name, (soft, hard) in cfg.get("rlimits", {}).items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    if cfg.get("setuid"):
        uid, gid = cfg["setuid"]
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError("uid drop did not take effect")
    _die_with_parent(cfg.get("parent_pid"))
    os.chdir(cfg["scratch"])
    src = cfg.get("copy_files_from")
    if src:
        for root, dirs, names in os.walk(src):
            rel = os.path.relpath(root, src)
            dest = os.path.normpath(os.path.join(cfg["scratch"], rel))
            os.makedirs(dest, exist_ok=True)
            for n in names:
                with open(os.path.join(root, n), "rb") as fi, open(os.path.join(dest, n), "wb") as fo:
                    fo.write(fi.read())
    if landlock is not None:
        landlock.apply(cfg["landlock"]["read"], cfg["landlock"]["write"])
    if seccomp is not None:
        seccomp.apply(allow_unix_sockets=cfg["seccomp"]["allow_unix_sockets"])
    return code


def _run_before(programs, namespace):
    """Run ``programs`` in ``namespace`` first, their output hidden; one that fails is skipped (the names it
    set before failing stay). They ran once already: a Python step's earlier steps
    (hierplan.nodes.context.earlier_programs)."""
    import io

    stdout = sys.stdout
    for program in programs:
        sys.stdout = io.StringIO()
        try:
            exec(compile(program, "<earlier step>", "exec"), namespace)  # sandboxed (this is the sandbox child)  # noqa: S102
        except (Exception, SystemExit):  # noqa: BLE001
            pass
        finally:
            sys.stdout = stdout


def main():
    try:
        with open(sys.argv[1], "rb") as f:
            cfg = marshal.load(f)  # marshal: no import cost, unlike json (re, enum, ...)
        code = _setup(cfg)
        _wait_for_start(int(sys.argv[2]))
    except BaseException as exc:  # noqa: BLE001 - any setup failure aborts before user code
        sys.stderr.write(MARKER + f"{type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        os._exit(SETUP_FAILED)
    filename = PROGRAM_FILENAME
    sys.path.extend(cfg["sys_path"])
    sys.argv[:] = [filename]
    sys.dont_write_bytecode = True
    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "__file__": filename}
    _run_before(cfg.get("before") or [], namespace)
    del cfg
    try:
        exec(compile(code, filename, "exec"), namespace)  # sandboxed (this is the sandbox child)  # noqa: S102
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001
        import linecache
        import traceback

        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        traceback.print_exception(type(exc), exc, tb)
        sys.stderr.flush()
        sys.exit(1)


if __name__ == "__main__":
    main()
