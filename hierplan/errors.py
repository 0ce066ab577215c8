"""User-facing errors: each becomes one clear CLI line and an exit code (bugs stay ordinary exceptions)."""

from __future__ import annotations


class HierplanError(Exception):
    """A problem the user can fix; the CLI prints the message, not a traceback."""

    exit_code = 1


class UsageError(HierplanError):
    """Bad command-line input: unknown run id, empty task, bad option value."""

    exit_code = 2


class RunNotFoundError(UsageError):
    """No run with that id in the chosen database."""


class ModelNotFoundError(HierplanError):
    """The requested model could not be located locally (and could not be downloaded)."""


class ModelLoadError(HierplanError):
    """The model was found but could not be loaded."""


class DatabaseError(HierplanError):
    """The run database cannot be opened or reached, is locked, corrupted, or cannot be written."""


class IsolationError(HierplanError):
    """The sandbox cannot provide the isolation level that was required."""


class RemoteModelError(HierplanError):
    """A model server could not be reached or refused a request (down, 401, 404 model, timeout, 5xx).

    Raised from the node that called the model, so the run stops as failed and ``hierplan resume`` continues
    from the last finished step once the server answers. ``status`` is the HTTP status (None: no answer).
    """

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status
