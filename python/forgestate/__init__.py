"""forgestate for Python: persist and resume AI agents' work as checkpoint comments on a
Forgejo/Gitea issue, or in a local store.

Two ways in, both running the bundled ``forgestate`` binary (the single implementation):

- :class:`Client` (and :class:`AsyncClient`, its coroutines), the verbs typed:
  ``Client.from_env().checkpoint(...)``, ``.resume()``, ``.latest()``, ...; failures raise
  :class:`ForgestateError` subclasses.
- :mod:`forgestate.session_state`, a drop-in for the CleverAgents ``session_state`` functions.
"""

from __future__ import annotations

from ._verbs import *  # noqa: F401,F403 - the answers' dataclasses
from ._verbs import __all__ as _answers
from .client import AsyncClient, Client
from .errors import (BinaryNotFound, ConfigError, Conflict, DataError, ForgestateError, Offline,
                     StorageError, UsageError)

try:
    from importlib.metadata import version as _version
    __version__ = _version("forgestate")
except Exception:  # noqa: BLE001 - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "Client", "AsyncClient", "ForgestateError", "ConfigError", "Conflict", "DataError", "Offline",
    "StorageError", "UsageError", "BinaryNotFound", "__version__",
]
# An answer's type named as an error (`Conflict`) stays `forgestate._verbs.Conflict`.
__all__ += [name for name in _answers if name not in __all__]
