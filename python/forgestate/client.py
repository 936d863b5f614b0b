""":class:`Client` and :class:`AsyncClient`: the CLI's verbs from Python, typed.

A client holds settings and, once a verb is called, one long-lived ``forgestate call --lines``
child that runs each verb exactly as the MCP server does (``_child.py``). The methods and the
dataclasses they answer are generated from the verb table (``_verbs.py``). Settings not given
here come from the CLI's environment variables (``FORGESTATE_URL``, ``FORGESTATE_REPO``,
``FORGESTATE_TOKEN``, ...) and config file.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, TypeVar, Union

from . import _child, _verbs

__all__ = ["Client", "AsyncClient"]

PathLike = Union[str, "os.PathLike[str]"]
_S = TypeVar("_S", bound="_Settings")


def _path(path: Optional[PathLike]) -> Optional[str]:
    return os.fspath(path) if path is not None else None


class _Settings:
    """A client's settings: ``store`` a local store directory, ``url``/``owner``/``repo`` the
    forge (``repo`` may be ``"owner/name"``), ``token`` the forge token (handed to the binary in
    its environment, never on a command line), ``token_file``, ``config`` a config file,
    ``allow_insecure_http`` for a forge on plain HTTP, ``strict`` to raise
    :class:`~forgestate.Offline` instead of spooling silently, ``binary`` the ``forgestate``
    executable to run."""

    def __init__(
        self, store: Optional[PathLike] = None, *, url: Optional[str] = None,
        owner: Optional[str] = None, repo: Optional[str] = None, token: Optional[str] = None,
        token_file: Optional[PathLike] = None, config: Optional[PathLike] = None,
        allow_insecure_http: bool = False, strict: bool = False, binary: Optional[PathLike] = None,
    ) -> None:
        self.store, self.url, self.owner, self.repo = _path(store), url, owner, repo
        self._token = token
        self.token_file, self.config = _path(token_file), _path(config)
        self.allow_insecure_http, self.strict, self.binary = allow_insecure_http, strict, _path(binary)
        self._fresh_process_state()

    def __repr__(self) -> str:
        shown = [f"{k}={getattr(self, k)!r}" for k in ("store", "url", "owner", "repo", "config")
                 if getattr(self, k) is not None]
        token = ["token=<hidden>"] if self._token is not None else []
        return f"{type(self).__name__}({', '.join(shown + token)})"

    @classmethod
    def from_env(cls: "type[_S]") -> _S:
        """A client configured only by the environment and config file, as the CLI is."""
        return cls()

    @classmethod
    def local(cls: "type[_S]", store: PathLike) -> _S:
        """A client of the local store in ``store``."""
        return cls(store)

    def _copy(self, cls: Any = None) -> Any:
        """These settings in a new client (of ``cls``, by default this one's), with no child."""
        other = (cls or type(self)).__new__(cls or type(self))
        other.__dict__.update({k: v for k, v in self.__dict__.items()
                               if not k.startswith("_") or k == "_token"})
        other._fresh_process_state()
        return other

    def with_repo(self: _S, owner: Optional[str], repo: Optional[str]) -> _S:
        """This client for another repository on the same forge."""
        other = self._copy()
        other.owner, other.repo = owner or self.owner, repo or self.repo
        return other

    def pure(self: _S) -> _S:
        """This client for the verbs that need no store (``render``, ``parse``): every forge
        setting is dropped, so a half-configured forge cannot fail them. The templates, redaction
        keys and resume map of the config file still apply; the forge token is then not known
        to the redactor."""
        other = self._copy()
        other.url = other.owner = other.repo = other.token_file = other._token = None
        # `--store` overrides any configured forge; `render` and `parse` never open the store,
        # and a directory inside the null device can never be created, should that change.
        other.store = os.path.join(os.devnull, "forgestate-needs-no-store")
        return other

    def _argv(self) -> List[str]:
        """The global flags of these settings (the token is never one)."""
        argv = [f"{flag}={value}" for flag, value in (
            ("--config", self.config), ("--store", self.store), ("--url", self.url),
            ("--owner", self.owner), ("--repo", self.repo), ("--token-file", self.token_file),
        ) if value is not None]
        return argv + (["--allow-insecure-http"] if self.allow_insecure_http else [])

    def _env(self) -> Optional[Dict[str, str]]:
        return None if self._token is None else {**os.environ, "FORGESTATE_TOKEN": self._token}


class Client(_Settings, _child.Calls, _verbs.Verbs):
    """The CLI's verbs, typed. The first verb starts one child, which later verbs reuse (a lock
    serialises threads); it is started again when it died, after a ``fork()``, and when the
    working directory or the ``FORGESTATE_*``/``XDG_*``/``HOME`` environment changed.
    :meth:`close` (or leaving a ``with`` block, or garbage collection) ends it."""


class AsyncClient(_Settings, _child.AsyncCalls, _verbs.AsyncVerbs):
    """:class:`Client`'s verbs as coroutines: the same settings and child, whose pipes the event
    loop drives (calls take turns). ``await client.aclose()`` (or ``async with``) ends it."""

