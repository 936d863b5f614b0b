"""The typed Python API: :class:`Client` and the dataclasses its verbs return.

A :class:`Client` holds settings only (store, forge, config file); each verb runs the bundled
``forgestate`` binary once, so the configuration, the outbox, trust and redaction are exactly
the CLI's. Settings not given here come from the same environment variables and config file as
the CLI (``FORGESTATE_URL``, ``FORGESTATE_OWNER``, ``FORGESTATE_REPO``, ``FORGESTATE_TOKEN``,
``FORGESTATE_CONFIG``, ``XDG_*``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _run
from .errors import DataError

__all__ = ["Client", "Record", "Comment", "Resume", "Saved", "Rendered", "ResumeMap"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Comment:
    """Where a record sits in its thread."""

    #: The comment id (thread order); ``None`` while the record waits in the outbox.
    id: Optional[int]
    author: str
    created_at: Optional[str]
    updated_at: Optional[str]
    url: Optional[str]
    edited: bool = False
    #: The record waits in this machine's outbox, not posted yet.
    pending: bool = False

    @classmethod
    def _from(cls, doc: Optional[Mapping[str, Any]]) -> Optional["Comment"]:
        if not isinstance(doc, Mapping):
            return None
        return cls(
            id=doc.get("id"),
            author=doc.get("author") or "",
            created_at=doc.get("created_at"),
            updated_at=doc.get("updated_at"),
            url=doc.get("url"),
            edited=bool(doc.get("edited")),
            pending=bool(doc.get("pending")),
        )


@dataclass(frozen=True)
class Record:
    """A ``[CHECKPOINT]`` or ``[HEALTH]`` record, as the CLI's ``--json`` prints it."""

    kind: str
    version: str
    id: Optional[str]
    agent: str
    session: str
    #: UTC RFC 3339 with microseconds, as on the ``Time:`` line.
    time: str
    phase: Optional[str] = None
    data: Dict[str, Any] = field(default_factory=dict)
    status: Optional[str] = None
    metrics: Dict[str, Any] = field(default_factory=dict)
    next_check: Optional[str] = None
    seq: Optional[int] = None
    parent: Optional[str] = None
    #: How many secret values were replaced by ``[REDACTED]``, when any were.
    redacted: Optional[int] = None
    comment: Optional[Comment] = None
    #: The whole JSON document, including fields newer than this class.
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def _from(cls, doc: Mapping[str, Any]) -> "Record":
        return cls(
            kind=doc.get("kind", "checkpoint"),
            version=doc.get("version", ""),
            id=doc.get("id"),
            agent=doc.get("agent", ""),
            session=doc.get("session", ""),
            time=doc.get("time", ""),
            phase=doc.get("phase"),
            data=doc.get("data", {}) if doc.get("kind") != "health" else {},
            status=doc.get("status"),
            metrics=doc.get("metrics") or {},
            next_check=doc.get("next_check"),
            seq=doc.get("seq"),
            parent=doc.get("parent"),
            redacted=doc.get("redacted"),
            comment=Comment._from(doc.get("comment")),
            raw=dict(doc),
        )


@dataclass(frozen=True)
class Resume:
    """Where an agent should pick a session up."""

    #: The resume map's answer for the last phase (the default on a fresh start).
    resume_point: str
    #: The last checkpoint's phase, or ``fresh_start``.
    phase: str
    #: The last checkpoint's whole data object (``{}`` on a fresh start).
    data: Dict[str, Any]
    #: The checkpoint the answer comes from; ``None`` on a fresh start.
    checkpoint: Optional[Record]
    #: The forge could not be read: this answer comes from this machine's outbox.
    offline: bool = False
    #: The checkpoint waits in this machine's outbox, not posted yet.
    pending: bool = False
    #: The phase matched no key of the resume map, so ``resume_point`` is the default.
    unmapped: bool = False
    warnings: List[str] = field(default_factory=list, compare=False)

    @property
    def fresh_start(self) -> bool:
        """No checkpoint was found."""
        return self.checkpoint is None


@dataclass(frozen=True)
class Saved:
    """What became of a record given to :meth:`Client.checkpoint` or :meth:`Client.health`."""

    record: Record
    #: The record id (UUIDv7).
    id: Optional[str]
    #: The comment id it was posted as; ``None`` when it was spooled.
    comment_id: Optional[int]
    url: Optional[str]
    #: Where it was posted (``local store DIR`` or the issue URL); ``None`` when spooled.
    store: Optional[str] = None
    #: The outbox file holding it, when the forge could not take it now (it is posted by a
    #: later command or ``forgestate flush``; nothing is lost).
    spooled: Optional[str] = None
    #: Why it was spooled.
    cause: Optional[str] = None
    warnings: List[str] = field(default_factory=list, compare=False)

    @property
    def posted(self) -> bool:
        """Whether the record is in the thread now (not waiting in the outbox)."""
        return self.spooled is None


@dataclass(frozen=True)
class Rendered:
    """A comment body and the record it holds (after redaction)."""

    body: str
    record: Record


@dataclass(frozen=True)
class ResumeMap:
    """An agent's phase table (keys may be globs) and the resume point of any other phase."""

    agent: str
    default: str
    phases: Dict[str, str]


class Client:
    """forgestate from Python: the CLI's verbs, typed.

    ``Client()`` (or :meth:`from_env`) takes every setting from the environment and config
    file, as the CLI does. Keyword arguments override them: ``store`` a local store directory,
    ``url``/``owner``/``repo`` the forge (``repo`` may be ``"owner/name"``), ``token`` the forge
    token (handed to the binary in its environment, never on a command line), ``token_file``,
    ``config`` a config file, ``strict`` to raise :class:`~forgestate.Offline` instead of
    spooling silently, ``binary`` the ``forgestate`` executable to run.
    """

    def __init__(
        self,
        store: Optional[PathLike] = None,
        *,
        url: Optional[str] = None,
        owner: Optional[str] = None,
        repo: Optional[str] = None,
        token: Optional[str] = None,
        token_file: Optional[PathLike] = None,
        config: Optional[PathLike] = None,
        allow_insecure_http: bool = False,
        strict: bool = False,
        binary: Optional[PathLike] = None,
    ) -> None:
        self.store = os.fspath(store) if store is not None else None
        self.url = url
        self.owner = owner
        self.repo = repo
        self._token = token
        self.token_file = os.fspath(token_file) if token_file is not None else None
        self.config = os.fspath(config) if config is not None else None
        self.allow_insecure_http = allow_insecure_http
        self.strict = strict
        self.binary = os.fspath(binary) if binary is not None else None

    def __repr__(self) -> str:
        shown = {
            k: v
            for k, v in (
                ("store", self.store),
                ("url", self.url),
                ("owner", self.owner),
                ("repo", self.repo),
                ("config", self.config),
            )
            if v is not None
        }
        token = ", token=<hidden>" if self._token is not None else ""
        args = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"Client({args}{token})"

    @classmethod
    def from_env(cls) -> "Client":
        """A client configured only by the environment and config file, as the CLI is."""
        return cls()

    @classmethod
    def local(cls, store: PathLike) -> "Client":
        """A client of the local store in ``store``."""
        return cls(store)

    def with_repo(self, owner: Optional[str], repo: Optional[str]) -> "Client":
        """This client for another repository on the same forge."""
        other = Client.__new__(Client)
        other.__dict__.update(self.__dict__)
        other.owner = owner or self.owner
        other.repo = repo or self.repo
        return other

    # -- running the binary -------------------------------------------------------------

    def _argv(self) -> List[str]:
        argv: List[str] = []
        for flag, value in (
            ("--config", self.config),
            ("--store", self.store),
            ("--url", self.url),
            ("--owner", self.owner),
            ("--repo", self.repo),
            ("--token-file", self.token_file),
        ):
            if value is not None:
                argv += [flag, value]
        if self.allow_insecure_http:
            argv.append("--allow-insecure-http")
        return argv

    def _env(self) -> Optional[Dict[str, str]]:
        if self._token is None:
            return None
        env = dict(os.environ)
        env["FORGESTATE_TOKEN"] = self._token
        return env

    def _run(self, verb: List[str], stdin: Optional[str] = None) -> _run.Answer:
        binary = self.binary or _run.find_binary()
        return _run.run(binary, [*verb, *self._argv()], stdin=stdin, env=self._env())

    # -- verbs ---------------------------------------------------------------------------

    def checkpoint(
        self, agent: str, session: str, phase: str, data: Optional[Mapping[str, Any]] = None
    ) -> Saved:
        """Posts a ``[CHECKPOINT]``: the phase ``agent`` reached in ``session``, with the state
        it needs to resume. A record the forge cannot take now is spooled to the outbox (see
        :attr:`Saved.spooled`), unless the client is ``strict``."""
        verb = ["checkpoint", "--agent", agent, "--session", session, "--phase", phase]
        return self._save(verb, "--data", data)

    def health(
        self,
        agent: str,
        session: str,
        metrics: Optional[Mapping[str, Any]] = None,
        *,
        status: str = "Active",
        next_check: Optional[str] = None,
    ) -> Saved:
        """Posts a ``[HEALTH]`` signal with ``metrics``."""
        verb = ["health", "--agent", agent, "--session", session, "--status", status]
        if next_check is not None:
            verb += ["--next-check", next_check]
        return self._save(verb, "--metrics", metrics)

    def _save(self, verb: List[str], flag: str, data: Optional[Mapping[str, Any]]) -> Saved:
        payload = _dumps(data if data is not None else {}, flag[2:])
        if self.strict:
            verb.append("--strict")
        answer = self._run([*verb, flag, "-"], stdin=payload)
        doc = answer.doc or {}
        return Saved(
            record=Record._from(doc.get("record") or {}),
            id=doc.get("id"),
            comment_id=doc.get("comment_id"),
            url=doc.get("url"),
            store=doc.get("store"),
            spooled=doc.get("spooled"),
            cause=doc.get("cause"),
            warnings=answer.warnings,
        )

    def resume(self, agent: str, session: str) -> Resume:
        """Where ``agent`` should resume ``session``: the resume point, the last phase and its
        data. Never a fresh start for a forge it could not read: that raises
        :class:`~forgestate.Offline` when this machine knows nothing either."""
        answer = self._run(["resume", "--agent", agent, "--session", session])
        doc = answer.doc or {}
        checkpoint = doc.get("checkpoint")
        record = Record._from(checkpoint) if isinstance(checkpoint, Mapping) else None
        return Resume(
            resume_point=doc.get("resume_point", ""),
            phase=doc.get("phase", ""),
            data=doc.get("data") or {},
            checkpoint=record,
            offline=bool(doc.get("offline")),
            pending=bool(record and record.comment and record.comment.pending),
            unmapped=bool(doc.get("unmapped")),
            warnings=answer.warnings,
        )

    def latest(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
    ) -> Optional[Record]:
        """The newest matching record (thread order), or ``None``. ``agent`` and ``session``
        match exactly, or as a glob when they hold ``*``, ``?``, ``[``, ``{``."""
        answer = self._run(["latest", *_filters(agent, session, kind)])
        return Record._from(answer.doc) if isinstance(answer.doc, Mapping) else None

    def list(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
        since: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[Record]:
        """Matching records, oldest first. ``since`` is RFC 3339 or an age (``90m``, ``24h``);
        ``limit`` keeps the newest N."""
        verb = ["list", *_filters(agent, session, kind)]
        if since is not None:
            verb += ["--since", since]
        if limit is not None:
            verb += ["--limit", str(int(limit))]
        doc = self._run(verb).doc or {}
        return [Record._from(r) for r in doc.get("records", [])]

    def init(self) -> Dict[str, Any]:
        """Finds or creates the session thread: ``{"thread", "author", "created"}``."""
        return dict(self._run(["init"]).doc or {})

    def flush(self) -> Dict[str, Any]:
        """Posts what this machine's outbox holds for the configured forge, oldest first, each
        exactly once; :class:`~forgestate.Offline` when the forge is still unreachable. (Every
        verb drains the outbox within a budget anyway.)"""
        return dict(self._run(["flush"]).doc or {})

    def render(self, record: Mapping[str, Any]) -> Rendered:
        """The comment body ``checkpoint``/``health`` would post for ``record`` (a mapping with
        ``agent``, ``session``, ``phase`` and ``data``, or a health record's fields; ``id`` and
        ``time`` are kept when given), redacted, with the configured templates."""
        doc = self._run(["render", "-"], stdin=_dumps(dict(record), "record")).doc or {}
        return Rendered(body=doc.get("body", ""), record=Record._from(doc.get("record") or {}))

    def parse(self, body: str) -> Record:
        """The record a comment body holds; :class:`~forgestate.DataError` (with ``reason``)
        when it is not one."""
        answer = self._run(["parse", "-"], stdin=body)
        if not isinstance(answer.doc, Mapping):
            raise DataError("not a record: forgestate printed no record")
        return Record._from(answer.doc)

    def resume_map(self, agent: str = "implementation-worker") -> ResumeMap:
        """The phase table ``agent`` resumes by, as configured."""
        doc = self._run(["resume-map", "--agent", agent]).doc or {}
        return ResumeMap(
            agent=doc.get("agent", agent),
            default=doc.get("default", ""),
            phases=dict(doc.get("phases") or {}),
        )


def _filters(agent: Optional[str], session: Optional[str], kind: Optional[str]) -> List[str]:
    argv: List[str] = []
    for flag, value in (("--agent", agent), ("--session", session), ("--kind", kind)):
        if value is not None:
            argv += [flag, value]
    return argv


def _dumps(value: Any, what: str) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as e:
        raise DataError(f"{what} cannot be written as JSON: {e}") from e

