"""Typed exceptions, mapped from the exit code of the error document every failure arrives as
(``{"error": {"code", "category", "message"}}``: the CLI's line, saying what to do)."""

from __future__ import annotations

import re
from typing import Mapping, Optional

__all__ = ["ForgestateError", "UsageError", "DataError", "StorageError", "Conflict", "Fenced",
           "Offline", "ConfigError", "BinaryNotFound", "error_for", "reworded"]


class ForgestateError(Exception):
    """Base class of every forgestate failure: ``code``, the command's exit code (64 usage, 65
    data, 73 conflict, 74 IO, 75 try again later, 78 configuration); ``category`` (``usage``,
    ``data``, ``conflict``, ``io``, ``tempfail`` or ``config``); ``message``, the one-line message
    the CLI prints; ``reason``, for a body that is not a record, its reason code (``no_marker``)."""

    code: int = 1
    category: str = "io"

    def __init__(self, message: str, *, code: Optional[int] = None,
                 category: Optional[str] = None, reason: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code if code is not None else type(self).code
        self.category = category if category is not None else type(self).category
        self.reason = reason


class UsageError(ForgestateError):
    """Exit 64: the verb was called wrongly (a malformed filter, an unknown argument)."""

    code, category = 64, "usage"


class DataError(ForgestateError):
    """Exit 65: bad input data (non-object data, a refused header value, a body that is not a
    record, a record over the size cap). Fix the data; retrying will not help."""

    code, category = 65, "data"


class Conflict(ForgestateError):
    """Exit 73: a compare-and-set checkpoint (``if_latest``) was refused: someone continued the
    session first. Nothing was posted; the message names the newer record. Resume, then decide."""

    code, category = 73, "conflict"


class Fenced(Conflict):
    """Exit 73, fenced: another writer took the session over (``resume(take_over=True)``), so
    this writer's records of it are ignored by every reader. The message names the takeover:
    who, when, and from which record. Stop working on the session (or take it over again)."""


class StorageError(ForgestateError):
    """Exit 74: the store or a file could not be read or written on this machine."""

    code, category = 74, "io"


class Offline(ForgestateError):
    """Exit 75: the forge could not be reached and this machine knows nothing that answers (or,
    with ``strict``, a record was spooled); try again later."""

    code, category = 75, "tempfail"


class ConfigError(ForgestateError):
    """Exit 78: a setup problem (config file, forge URL, token, permissions, no session issue).
    Fix the configuration; retrying will not help."""

    code, category = 78, "config"


class BinaryNotFound(ConfigError):
    """The bundled ``forgestate`` binary was not found next to the interpreter or on PATH."""


_BY_CODE = {64: UsageError, 65: DataError, 73: Conflict, 74: StorageError, 75: Offline,
            78: ConfigError}


def error_for(code: int, message: str, reason: Optional[str] = None) -> ForgestateError:
    """The exception for an exit code (an unknown code is a :class:`StorageError`); a conflict
    whose message starts with ``fenced:`` is :class:`Fenced`; a key twice in an argument of the
    request line Python wrote is a :class:`DataError` (two keys that JSON makes one: 1, "1")."""
    if code == 73 and message.startswith("fenced:"):
        return Fenced(message, code=code, reason=reason)
    merged = code == 64 and _MERGED.match(message)
    if merged:
        code, message = 65, (f"{merged[2]} has two keys that are one JSON key {merged[1]} (JSON "
                             "keys are text: 1 and \"1\" are one), so a value would be lost")
    return _BY_CODE.get(code, StorageError)(message, code=code, reason=reason)


_MERGED = re.compile(r'the request line has the key ("(?:[^"\\]|\\.)*") twice \(in args\.(.+?)\);')
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)(?![\w-])")


def reworded(error: ForgestateError, names: Mapping[str, str]) -> ForgestateError:
    """The same error, each flag ``names`` maps (``--blocker``: ``blockers``) named so."""
    message = _FLAG.sub(lambda m: names.get(m.group(0), m.group(0)), error.message)
    if message == error.message:
        return error
    return type(error)(message, code=error.code, category=error.category, reason=error.reason)
