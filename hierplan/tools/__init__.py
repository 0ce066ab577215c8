"""Tools the agent's steps call."""

from .sandbox import ExecutionResult, SandboxLimits, SandboxStatus, run_python, sandbox_status

__all__ = ["ExecutionResult", "SandboxLimits", "SandboxStatus", "run_python", "sandbox_status"]
