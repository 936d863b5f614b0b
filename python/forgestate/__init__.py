"""forgestate for Python: persist and resume AI agents' work as checkpoint comments on a
Forgejo/Gitea issue, or in a local store.

Two ways in, both running the bundled ``forgestate`` binary (the single implementation):

- :class:`Client`, a typed API: ``Client.from_env().checkpoint(...)``, ``.health()``,
  ``.resume()``, ``.latest()``, ``.list()``, ``.status()``, ``.history()``, ``.fork()``; failures raise :class:`ConfigError`,
  :class:`DataError`, :class:`Offline` (all :class:`ForgestateError`).
- :mod:`forgestate.session_state`, a drop-in for the CleverAgents ``session_state`` functions.
"""

from __future__ import annotations

from .answers import (
    Change,
    Comment,
    History,
    Origin,
    Record,
    Rendered,
    Resume,
    ResumeMap,
    Listing,
    Saved,
    Status,
    StatusRow,
    Step,
)
from .client import Client
from .errors import (
    BinaryNotFound,
    ConfigError,
    Conflict,
    DataError,
    ForgestateError,
    Offline,
    StorageError,
    UsageError,
)

try:
    from importlib.metadata import PackageNotFoundError, version as _version

    try:
        __version__ = _version("forgestate")
    except PackageNotFoundError:  # running from a source tree
        __version__ = "0+unknown"
except ImportError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "Client",
    "Comment",
    "Record",
    "Listing",
    "Rendered",
    "Resume",
    "ResumeMap",
    "Saved",
    "Status",
    "StatusRow",
    "History",
    "Step",
    "Origin",
    "Change",
    "ForgestateError",
    "ConfigError",
    "Conflict",
    "DataError",
    "Offline",
    "StorageError",
    "UsageError",
    "BinaryNotFound",
    "__version__",
]
