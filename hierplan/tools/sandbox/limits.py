"""Per-run resource limits for the Python sandbox (defaults sized for real data work)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MiB = 1024 * 1024
GiB = 1024 * MiB


class SandboxLimits(BaseModel):
    """Limits applied to one ``run_python`` call.

    Defaults: 10 s of CPU, 30 s wall clock, 1 GiB address space, 1 MiB of captured output per
    stream, a 64 MiB scratch directory (enforced as a tmpfs size under bwrap; without bwrap only
    ``file_size`` bounds each file), 256 open files, 64 processes/threads (binding only when the
    code runs under a non-root uid), 64 MiB per written file.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_seconds: int = Field(10, ge=1, description="RLIMIT_CPU: SIGXCPU after this much CPU time.")
    wall_seconds: float = Field(30.0, gt=0, description="Wall-clock timeout; the whole process group is killed.")
    memory_bytes: int = Field(1 * GiB, ge=64 * MiB, description="RLIMIT_AS (virtual address space).")
    output_bytes: int = Field(1 * MiB, ge=1024, description="Cap on captured stdout and on stderr, each; the run is killed past it.")
    scratch_bytes: int = Field(64 * MiB, ge=1 * MiB, description="Size of the scratch tmpfs (cwd) under bwrap.")
    max_open_files: int = Field(256, ge=16, description="RLIMIT_NOFILE.")
    max_processes: int = Field(64, ge=1, description="RLIMIT_NPROC (processes + threads of the sandbox uid).")
    file_size: int = Field(64 * MiB, ge=0, description="RLIMIT_FSIZE: largest file the code may write.")
