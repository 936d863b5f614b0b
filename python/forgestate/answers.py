"""The typed answers of :class:`~forgestate.Client`'s verbs: one dataclass per ``--json`` shape.

Every field is named as the CLI's ``--json`` answer names it, so a field the binary adds shows
up in ``raw`` (or fails ``python/tests/test_schema.py``) instead of vanishing. Building these
from a JSON document is reshaping only: no format, store or policy logic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

__all__ = [
    "Comment",
    "Record",
    "Resume",
    "Saved",
    "Rendered",
    "ResumeMap",
    "StatusRow",
    "Status",
    "Change",
    "Origin",
    "Step",
    "History",
]


def _strings(value: Any) -> List[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _warnings(doc: Mapping[str, Any], stderr: List[str]) -> List[str]:
    """The answer's own ``warnings`` and the binary's warning lines, each once."""
    seen: Dict[str, None] = {}
    for line in [*_strings(doc.get("warnings")), *stderr]:
        seen.setdefault(line, None)
    return list(seen)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


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
    #: The forge issue holding it (a member of the session thread); ``None`` on the local store.
    issue: Optional[int] = None
    #: Believed without a signature although signing keys are set: posted before the thread's
    #: first signed record (``[signing] require_signatures = false``).
    unsigned: bool = False

    @classmethod
    def _from(cls, doc: Any) -> Optional["Comment"]:
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
            issue=doc.get("issue"),
            unsigned=bool(doc.get("unsigned")),
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
    #: Handoff (``Next:``): the next step, in words, for whoever picks the work up.
    next: Optional[str] = None
    #: Handoff (``Blocker:`` lines): what stands in the way.
    blockers: List[str] = field(default_factory=list)
    #: ``Context-Hash:`` of the context file the agent worked from (``sha256:...``).
    context_hash: Optional[str] = None
    #: The session issue a rotation carried this record forward from (``Carried-From: #N``).
    carried_from: Optional[int] = None
    #: When the record was first posted (``Posted-At:``), kept when a rotation or a tidy of the
    #: session thread carried it to another issue; ages are measured from it.
    posted_at: Optional[str] = None
    #: When the comment a carried copy came from had been edited (``Edited-At:``): the copy is
    #: still flagged as edited.
    edited_at: Optional[str] = None
    #: How many secret values were replaced by ``[REDACTED]``, when any were.
    redacted: Optional[int] = None
    #: A checkpoint's write-ahead intent: ``{"name": ..., "data": ...}`` (``Intent:``).
    intent: Optional[Dict[str, Any]] = None
    #: The intent a checkpoint confirms explicitly (``Done:``).
    done: Optional[str] = None
    #: An ``[END]`` record's reason (``completed``, ``interrupted``, ``error``, ``user_stop``).
    reason: Optional[str] = None
    #: An ``[END]`` record's note.
    note: Optional[str] = None
    comment: Optional[Comment] = None
    #: What the store noticed on the way (``latest`` only; empty elsewhere).
    warnings: List[str] = field(default_factory=list, compare=False)
    #: ``latest`` only: ``False`` when the read may have missed records (a forge whose comment
    #: list was cut short, or an offline answer); a warning says why.
    complete: bool = field(default=True, compare=False)
    #: ``latest`` only: the forge could not be read, so the record comes from this machine's
    #: read cache and outbox (a warning says so).
    offline: bool = field(default=False, compare=False)
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
            next=doc.get("next"),
            blockers=_strings(doc.get("blockers")),
            context_hash=doc.get("context_hash"),
            carried_from=doc.get("carried_from"),
            posted_at=doc.get("posted_at"),
            edited_at=doc.get("edited_at"),
            redacted=doc.get("redacted"),
            intent=doc.get("intent"),
            done=doc.get("done"),
            reason=doc.get("reason"),
            note=doc.get("note"),
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
    #: Handoff: the checkpoint's next step, in words (``None`` when it named none).
    next: Optional[str] = None
    #: Handoff: the checkpoint's blockers.
    blockers: List[str] = field(default_factory=list)
    #: The checkpoint's record id, comment id and ``Time:`` (``None`` on a fresh start).
    record_id: Optional[str] = None
    comment_id: Optional[int] = None
    time: Optional[str] = None
    #: No checkpoint exists for this agent and session: start from the beginning.
    fresh_start: bool = False
    #: The ``Context-Hash:`` the checkpoint recorded (``sha256:...``), if any.
    context_hash: Optional[str] = None
    #: Only when ``resume(context_file=...)`` was given: whether that file changed since the
    #: checkpoint (``True`` too when the checkpoint recorded no hash, since nobody can say).
    context_drift: Optional[bool] = None
    #: The id of the newest record of this agent and session (what ``if_latest`` takes, and
    #: the next record's ``Parent:``).
    latest_id: Optional[str] = None
    #: The session ended and no checkpoint came after: ``{"reason", "at", "note", "id"}``.
    ended: Optional[Dict[str, Any]] = None
    #: The end record a later checkpoint reopened, if any.
    reopened: Optional[Dict[str, Any]] = None
    #: A write-ahead intent no later checkpoint confirmed: ``{"name", "data", "id", "at"}``.
    #: Check whether the side effect happened before doing it again.
    pending_intent: Optional[Dict[str, Any]] = None
    #: Records that continue from the same parent (two writers): ``{"parent", "records"}``.
    conflicts: List[Dict[str, Any]] = field(default_factory=list)
    #: ``False`` when the read may have missed records (a forge whose comment list was cut short
    #: or is missing, or an offline answer); a warning says why.
    complete: bool = field(default=True, compare=False)
    warnings: List[str] = field(default_factory=list, compare=False)

    @classmethod
    def _from(cls, doc: Mapping[str, Any], warnings: List[str]) -> "Resume":
        checkpoint = doc.get("checkpoint")
        record = Record._from(checkpoint) if isinstance(checkpoint, Mapping) else None
        drift = doc.get("context_drift")
        return cls(
            resume_point=doc.get("resume_point", ""),
            phase=doc.get("phase", ""),
            data=doc.get("data") or {},
            checkpoint=record,
            offline=bool(doc.get("offline")),
            pending=bool(record and record.comment and record.comment.pending),
            unmapped=bool(doc.get("unmapped")),
            next=doc.get("next"),
            blockers=_strings(doc.get("blockers")),
            context_drift=bool(drift) if drift is not None else None,
            record_id=doc.get("record_id"),
            comment_id=doc.get("comment_id"),
            time=doc.get("time"),
            fresh_start=bool(doc.get("fresh_start", record is None)),
            context_hash=doc.get("context_hash"),
            latest_id=doc.get("latest_id"),
            ended=doc.get("ended"),
            reopened=doc.get("reopened"),
            pending_intent=doc.get("pending_intent"),
            conflicts=list(doc.get("conflicts") or []),
            complete=doc.get("complete") is not False,
            warnings=_warnings(doc, warnings),
        )


@dataclass(frozen=True)
class Saved:
    """What became of a record given to :meth:`Client.checkpoint`, :meth:`Client.health` or
    :meth:`Client.fork`."""

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
    #: In the thread now (``False``: waiting in the outbox).
    posted: bool = True
    #: Retrying cannot post it: the cause must be fixed first (then ``forgestate flush``).
    permanent: bool = False
    #: The automatic rotation this save triggered, as a dict (``from``, ``to``, ``carried``...).
    rotation: Optional[Dict[str, Any]] = None
    warnings: List[str] = field(default_factory=list, compare=False)

    @classmethod
    def _from(cls, doc: Mapping[str, Any], warnings: List[str]) -> "Saved":
        return cls(
            record=Record._from(_mapping(doc.get("record"))),
            id=doc.get("id"),
            comment_id=doc.get("comment_id"),
            url=doc.get("url"),
            store=doc.get("store"),
            spooled=doc.get("spooled"),
            cause=doc.get("cause"),
            posted=bool(doc.get("posted", doc.get("spooled") is None)),
            permanent=bool(doc.get("permanent")),
            rotation=dict(doc["rotation"]) if isinstance(doc.get("rotation"), Mapping) else None,
            warnings=_warnings(doc, warnings),
        )


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


@dataclass(frozen=True)
class StatusRow:
    """One (agent, session) of :meth:`Client.status`, with its verdict."""

    agent: str
    session: str
    #: ``conflicted``, ``stalled``, ``warning``, ``alive``, ``paused``, ``ended`` or
    #: ``completed``.
    verdict: str
    #: Why, in words (``last record 12m ago``).
    reason: str
    #: Seconds since the last record, on the store's clock.
    age_secs: int
    #: When the last record was posted (the store's comment time).
    last_seen: str
    #: ``checkpoint`` or ``health``.
    last_kind: str
    #: How many records the pair has.
    records: int
    phase: Optional[str] = None
    resume_point: Optional[str] = None
    #: The last health record's status.
    health: Optional[str] = None
    metrics: Optional[Dict[str, Any]] = None
    next: Optional[str] = None
    blockers: List[str] = field(default_factory=list)
    warn_after_secs: int = 0
    stalled_after_secs: int = 0
    #: The end record (``{"reason", "at", "note", "id"}``) when the session ended.
    ended: Optional[Dict[str, Any]] = None
    #: A checkpoint came after an end record: the session was reopened.
    reopened: bool = False
    #: The name of the intent the newest checkpoint left unconfirmed.
    pending_intent: Optional[str] = None
    #: How many parents more than one record continues from (two writers).
    conflicts: int = 0

    @classmethod
    def _from(cls, doc: Mapping[str, Any]) -> "StatusRow":
        return cls(
            agent=doc.get("agent", ""),
            session=doc.get("session", ""),
            verdict=doc.get("verdict", ""),
            reason=doc.get("reason", ""),
            age_secs=int(doc.get("age_secs") or 0),
            last_seen=doc.get("last_seen", ""),
            last_kind=doc.get("last_kind", ""),
            records=int(doc.get("records") or 0),
            phase=doc.get("phase"),
            resume_point=doc.get("resume_point"),
            health=doc.get("health"),
            metrics=doc.get("metrics"),
            next=doc.get("next"),
            blockers=_strings(doc.get("blockers")),
            warn_after_secs=int(doc.get("warn_after_secs") or 0),
            stalled_after_secs=int(doc.get("stalled_after_secs") or 0),
            ended=doc.get("ended"),
            reopened=bool(doc.get("reopened")),
            pending_intent=doc.get("pending_intent"),
            conflicts=int(doc.get("conflicts") or 0),
        )


@dataclass(frozen=True)
class Status:
    """Who is alive: :meth:`Client.status`'s answer."""

    #: One row per (agent, session), stalled first.
    rows: List[StatusRow]
    #: The store's clock when the thread was read (ages are measured on it); ``None`` from a
    #: binary that answered ``status --json`` with the bare list of rows.
    now: Optional[str] = None
    #: The store could not be read: only this machine's pending records were judged.
    offline: bool = False
    #: How many rows are stalled.
    stalled: int = 0
    #: ``False`` when the read may have missed records (a forge whose comment list was cut short
    #: or is missing, or an offline answer); a warning says why.
    complete: bool = field(default=True, compare=False)
    warnings: List[str] = field(default_factory=list, compare=False)

    @property
    def stalled_rows(self) -> List[StatusRow]:
        """The rows whose verdict is ``stalled``."""
        return [r for r in self.rows if r.verdict == "stalled"]

    @classmethod
    def _from(cls, doc: Any, warnings: List[str]) -> "Status":
        # Before the verb table, `status --json` printed the bare array of rows.
        if isinstance(doc, list):
            rows = [StatusRow._from(_mapping(r)) for r in doc]
            stalled = sum(1 for r in rows if r.verdict == "stalled")
            return cls(rows=rows, stalled=stalled, warnings=warnings)
        doc = _mapping(doc)
        rows = [StatusRow._from(_mapping(r)) for r in doc.get("rows") or []]
        return cls(
            rows=rows,
            stalled=int(doc.get("stalled", sum(1 for r in rows if r.verdict == "stalled"))),
            now=doc.get("now"),
            offline=bool(doc.get("offline")),
            complete=doc.get("complete") is not False,
            warnings=_warnings(doc, warnings),
        )


@dataclass(frozen=True)
class Change:
    """One JSON change between consecutive checkpoints (``history(diff=True)``)."""

    #: ``added``, ``removed`` or ``changed``.
    op: str
    #: A JSON Pointer into the data (``/completed_subtasks/2``).
    path: str
    old: Any = None
    new: Any = None

    @classmethod
    def _from(cls, doc: Mapping[str, Any]) -> "Change":
        return cls(op=doc.get("op", ""), path=doc.get("path", ""), old=doc.get("old"),
                   new=doc.get("new"))


@dataclass(frozen=True)
class Origin:
    """The checkpoint a forked session started from (its ``Parent:``)."""

    session: str
    agent: str
    record_id: str
    phase: Optional[str] = None
    comment_id: Optional[int] = None

    @classmethod
    def _from(cls, doc: Any) -> Optional["Origin"]:
        if not isinstance(doc, Mapping):
            return None
        return cls(
            session=doc.get("session", ""),
            agent=doc.get("agent", ""),
            record_id=doc.get("record_id", ""),
            phase=doc.get("phase"),
            comment_id=doc.get("comment_id"),
        )


@dataclass(frozen=True)
class Step:
    """One record of :meth:`Client.history`, numbered in thread order."""

    n: int
    kind: str
    agent: str
    #: The record's ``Time:`` line.
    time: str
    #: When the store received it.
    posted_at: str
    seq: Optional[int] = None
    record_id: Optional[str] = None
    comment_id: Optional[int] = None
    #: Seconds since the previous record of the session (``None`` for the first).
    since_previous_secs: Optional[int] = None
    phase: Optional[str] = None
    resume_point: Optional[str] = None
    #: A health record's status.
    status: Optional[str] = None
    parent: Optional[str] = None
    #: Set on the first checkpoint of a forked session.
    forked_from: Optional[Origin] = None
    next: Optional[str] = None
    blockers: List[str] = field(default_factory=list)
    #: The forge issue holding it (a member of the session thread); ``None`` on the local store.
    issue: Optional[int] = None
    #: The changes since the agent's previous checkpoint (``history(diff=True)`` only).
    changes: Optional[List[Change]] = None

    @classmethod
    def _from(cls, doc: Mapping[str, Any]) -> "Step":
        changes = doc.get("changes")
        return cls(
            n=int(doc.get("n") or 0),
            kind=doc.get("kind", ""),
            agent=doc.get("agent", ""),
            time=doc.get("time", ""),
            posted_at=doc.get("posted_at", ""),
            seq=doc.get("seq"),
            record_id=doc.get("record_id"),
            comment_id=doc.get("comment_id"),
            since_previous_secs=doc.get("since_previous_secs"),
            phase=doc.get("phase"),
            resume_point=doc.get("resume_point"),
            status=doc.get("status"),
            parent=doc.get("parent"),
            forked_from=Origin._from(doc.get("forked_from")),
            next=doc.get("next"),
            blockers=_strings(doc.get("blockers")),
            issue=doc.get("issue"),
            changes=[Change._from(_mapping(c)) for c in changes]
            if isinstance(changes, list)
            else None,
        )


@dataclass(frozen=True)
class History:
    """Every record of one session, step by step: :meth:`Client.history`'s answer."""

    session: str
    records: List[Step]
    #: The agent glob asked for, if any.
    agent: Optional[str] = None
    #: The checkpoint this session was forked from, when it was.
    forked_from: Optional[Origin] = None
    #: Per agent, records continuing from the same parent (two writers):
    #: ``{"agent", "parent", "records"}``.
    conflicts: List[Dict[str, Any]] = field(default_factory=list)
    #: ``False`` when the read may have missed records (a forge whose comment list was cut short
    #: or is missing, or an offline answer); a warning says why.
    complete: bool = field(default=True, compare=False)
    warnings: List[str] = field(default_factory=list, compare=False)

    @classmethod
    def _from(cls, doc: Any, warnings: List[str]) -> "History":
        doc = _mapping(doc)
        return cls(
            session=doc.get("session", ""),
            records=[Step._from(_mapping(s)) for s in doc.get("records") or []],
            agent=doc.get("agent"),
            forked_from=Origin._from(doc.get("forked_from")),
            conflicts=list(doc.get("conflicts") or []),
            complete=doc.get("complete") is not False,
            warnings=_warnings(doc, warnings),
        )


@dataclass(frozen=True)
class Listing:
    """:meth:`Client.listing`'s answer: the matching records and what the read noticed
    (:meth:`Client.list` returns only ``records``)."""

    #: The matching records, oldest first.
    records: List[Record]
    #: The store could not be read: only this machine's pending records are listed.
    offline: bool = False
    #: With ``invalid=True``: the comments that are not valid, trusted records, with the reason.
    invalid: Optional[List[Dict[str, Any]]] = None
    #: ``False`` when the read may have missed records (a forge whose comment list was cut short
    #: or is missing, or an offline answer); a warning says why.
    complete: bool = field(default=True, compare=False)
    warnings: List[str] = field(default_factory=list, compare=False)

    @classmethod
    def _from(cls, doc: Any, warnings: List[str]) -> "Listing":
        doc = _mapping(doc)
        invalid = doc.get("invalid")
        return cls(
            records=[Record._from(_mapping(r)) for r in doc.get("records") or []],
            offline=bool(doc.get("offline")),
            invalid=[dict(_mapping(i)) for i in invalid] if isinstance(invalid, list) else None,
            complete=doc.get("complete") is not False,
            warnings=_warnings(doc, warnings),
        )
