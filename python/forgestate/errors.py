"""Typed exceptions, mapped from the ``forgestate`` command's exit categories.

Every failure of the command arrives as its ``--json`` error document
``{"error": {"code", "category", "message"}}``; the message is the same one line the CLI
prints, which says what went wrong and what to do.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = [
    "ForgestateError",
    "UsageError",
    "DataError",
    "StorageError",
    "Offline",
    "ConfigError",
    "BinaryNotFound",
    "error_for",
    "reworded",
]


class ForgestateError(Exception):
    """Base class of every forgestate failure.

    Attributes:
        code: the command's exit code (64 usage, 65 data, 74 IO, 75 try again later,
            78 configuration).
        category: ``usage``, ``data``, ``io``, ``tempfail`` or ``config``.
        message: the one-line message the CLI prints.
        reason: for a body that is not a record, the reason code (``no_marker``, ...).
    """

    code: int = 1
    category: str = "io"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[int] = None,
        category: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if category is not None:
            self.category = category
        self.reason = reason


class UsageError(ForgestateError):
    """Exit 64: the command was called wrongly (a malformed filter, an unknown flag)."""

    code = 64
    category = "usage"


class DataError(ForgestateError):
    """Exit 65: bad input data (non-object data, a refused header value, a body that is not a
    record, a record over the size cap). Fix the data; retrying will not help."""

    code = 65
    category = "data"


class StorageError(ForgestateError):
    """Exit 74: the store or a file could not be read or written on this machine."""

    code = 74
    category = "io"


class Conflict(ForgestateError):
    """Exit 73: a compare-and-set checkpoint (``if_latest``) was refused: the session's newest
    record is not the one named, so someone continued it first. Nothing was posted; the
    message names the newer record and when it was written. Resume, then decide."""

    code = 73
    category = "conflict"


class Offline(ForgestateError):
    """Exit 75: the forge could not be reached and this machine knows nothing that answers;
    try again later."""

    code = 75
    category = "tempfail"


class ConfigError(ForgestateError):
    """Exit 78: a setup problem (config file, forge URL, token, permissions, no session
    issue). Fix the configuration; retrying will not help."""

    code = 78
    category = "config"


class BinaryNotFound(ConfigError):
    """The bundled ``forgestate`` binary was not found next to the interpreter or on PATH."""


_BY_CODE = {
    64: UsageError,
    65: DataError,
    73: Conflict,
    74: StorageError,
    75: Offline,
    78: ConfigError,
}


def error_for(code: int, message: str, reason: Optional[str] = None) -> ForgestateError:
    """The exception for an exit code (an unknown code is a :class:`StorageError`)."""
    cls = _BY_CODE.get(code, StorageError)
    return cls(message, code=code, reason=reason)


#: The command's flags as :class:`~forgestate.Client` names them (keyword arguments).
PARAMETERS = {
    "agent": "agent",
    "session": "session",
    "phase": "phase",
    "data": "data",
    "metrics": "metrics",
    "status": "status",
    "next-check": "next_check",
    "next": "next",
    "blocker": "blockers",
    "context-file": "context_file",
    "reason": "reason",
    "note": "note",
    "intent": "intent",
    "intent-data": "intent_data",
    "done": "done",
    "if-latest": "if_latest",
    "merge": "merge",
    "parent": "parent",
    "kind": "kind",
    "since": "since",
    "limit": "limit",
    "warn-after": "warn_after",
    "stalled-after": "stalled_after",
    "new-session": "new_session",
    "at": "at",
    "diff": "diff",
    "strict": "strict",
    "store": "store",
    "url": "url",
    "owner": "owner",
    "repo": "repo",
    "token-file": "token_file",
    "config": "config",
    "allow-insecure-http": "allow_insecure_http",
}

_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)(?![\w-])")


def pythonic(message: str) -> str:
    """``message`` with each flag the :class:`~forgestate.Client` has a parameter for named as
    that parameter (``--data must be a JSON object`` → ``data must be a JSON object``); other
    flags (of verbs run by hand) stay."""
    return _FLAG.sub(lambda m: PARAMETERS.get(m.group(1), m.group(0)), message)


def reworded(error: ForgestateError) -> ForgestateError:
    """The same error, its message in Python's terms (see :func:`pythonic`)."""
    message = pythonic(error.message)
    if message == error.message:
        return error
    again = type(error)(message, code=error.code, category=error.category, reason=error.reason)
    again.__cause__ = error.__cause__
    return again
