"""Sandbox for model-written Python: bwrap, Landlock, seccomp, rlimits, uid drop, clean env.

See docs/sandbox.md for what each layer stops and the default limits.
"""

from .api import run_python
from .limits import SandboxLimits
from .result import ExecutionResult
from .status import LayerStatus, SandboxStatus, sandbox_status

__all__ = ["ExecutionResult", "LayerStatus", "SandboxLimits", "SandboxStatus", "run_python", "sandbox_status"]
