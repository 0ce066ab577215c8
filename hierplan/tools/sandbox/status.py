"""What the sandbox can do on this machine, for ``hierplan sandbox`` and callers."""

from __future__ import annotations

from pydantic import BaseModel

from .probe import probe
from .result import ALL_LAYERS, Level

DESCRIPTIONS = {
    "bwrap": "bubblewrap namespaces: private /, no network, own pid space, size-limited scratch tmpfs",
    "landlock": "Landlock: reads only the interpreter/libraries/allowed packages, writes only scratch; no TCP; no signals out",
    "seccomp": "seccomp: no non-unix sockets, io_uring, ptrace, mount, unshare, bpf, setsid, kill(-1)",
    "rlimits": "rlimits: CPU, address space, file size, open files, processes, no core dumps",
    "uid": "unprivileged uid (a fresh per-run uid when hierplan runs as root)",
    "env": "environment allow-list: the agent's variables and secrets never reach the code",
}


class LayerStatus(BaseModel):
    name: str
    available: bool
    active: bool
    reason: str | None = None
    description: str = ""


class SandboxStatus(BaseModel):
    layers: list[LayerStatus]
    active: list[str]
    level: Level
    landlock_abi: int
    running_as_root: bool

    def layer(self, name: str) -> LayerStatus:
        return next(entry for entry in self.layers if entry.name == name)


def sandbox_status() -> SandboxStatus:
    """Each layer: available on this machine, active by default, and why (not)."""
    from .api import plan_layers  # local: api imports this package's heavier parts

    p = probe()
    use, missing = plan_layers(None)
    layers = []
    for name in ALL_LAYERS:
        reason = missing.get(name) or p.reasons.get(name)
        layers.append(LayerStatus(name=name, available=p.available[name], active=name in use,
                                  reason=reason, description=DESCRIPTIONS[name]))
    from .result import level_of

    return SandboxStatus(layers=layers, active=[n for n in ALL_LAYERS if n in use], level=level_of(use),
                         landlock_abi=p.landlock_abi, running_as_root=p.root)
