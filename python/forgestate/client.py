"""The typed Python API: :class:`Client` and the dataclasses its verbs return.

A :class:`Client` holds settings (store, forge, config file) and, once a verb is called, one
long-lived ``forgestate call --lines`` child: each verb is one JSON request line to it, run by
the binary's verb table exactly as its MCP server runs it, so the configuration, the outbox,
trust and redaction are the CLI's, and the store is opened once. Settings not given here come
from the same environment variables and config file as the CLI (``FORGESTATE_URL``,
``FORGESTATE_OWNER``, ``FORGESTATE_REPO``, ``FORGESTATE_TOKEN``, ``FORGESTATE_CONFIG``,
``XDG_*``). Close the child with :meth:`Client.close` or ``with Client(...) as c:``; it is
also closed when the client is garbage-collected.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _child, _run
from .answers import (
    Listing,
    Comment,
    History,
    Record,
    Rendered,
    Resume,
    ResumeMap,
    Saved,
    Status,
)
from .errors import DataError, ForgestateError, reworded

__all__ = [
    "Client",
    "Record",
    "Comment",
    "Resume",
    "Saved",
    "Rendered",
    "ResumeMap",
    "Status",
    "History",
]

PathLike = Union[str, "os.PathLike[str]"]


class Client(_child.Calls):
    """forgestate from Python: the CLI's verbs, typed.

    ``Client()`` (or :meth:`from_env`) takes every setting from the environment and config
    file, as the CLI does. Keyword arguments override them: ``store`` a local store directory,
    ``url``/``owner``/``repo`` the forge (``repo`` may be ``"owner/name"``), ``token`` the forge
    token (handed to the binary in its environment, never on a command line), ``token_file``,
    ``config`` a config file, ``strict`` to raise :class:`~forgestate.Offline` instead of
    spooling silently, ``binary`` the ``forgestate`` executable to run.

    The first verb starts one ``forgestate call --lines`` child, which later verbs reuse (one
    at a time: a lock serialises them across threads). It is started again when it died, after
    a ``fork()``, and when the working directory or the ``FORGESTATE_*``/``XDG_*``/``HOME``
    environment changed; :meth:`close` (or leaving a ``with`` block) ends it.
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
        self._fresh_process_state()

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

    def _copy(self) -> "Client":
        other = Client.__new__(Client)
        other.__dict__.update(self.__dict__)
        other._fresh_process_state()
        return other

    def with_repo(self, owner: Optional[str], repo: Optional[str]) -> "Client":
        """This client for another repository on the same forge."""
        other = self._copy()
        other.owner = owner or self.owner
        other.repo = repo or self.repo
        return other

    # -- talking to the binary ----------------------------------------------------------

    def _argv(self) -> List[str]:
        """The global flags of this client's settings (the token is never one)."""
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
                argv.append(f"{flag}={value}")
        if self.allow_insecure_http:
            argv.append("--allow-insecure-http")
        return argv

    def _env(self) -> Optional[Dict[str, str]]:
        if self._token is None:
            return None
        env = dict(os.environ)
        env["FORGESTATE_TOKEN"] = self._token
        return env

    def _once(self, verb: List[str]) -> _run.Answer:
        """Runs ``forgestate --json VERB`` as its own process: for the verbs ``forgestate call``
        does not run yet (``flush``)."""
        binary = self.binary or _run.find_binary()
        try:
            return _run.run(binary, [*verb, *self._argv()], env=self._env())
        except ForgestateError as e:
            raise reworded(e) from None

    def pure(self) -> "Client":
        """This client for the verbs that need no store (``render``, ``parse``): every forge
        setting is dropped, so a half-configured forge (``FORGESTATE_URL`` without an owner)
        cannot fail them. The templates, redaction keys and resume map of the config file
        still apply; the forge token is not known to the redactor then."""
        other = self._copy()
        other.url = other.owner = other.repo = other.token_file = None
        other._token = None
        # `--store` overrides any configured forge. `render` and `parse` never read or write the
        # store (the child only opens its settings); a directory inside the null device can
        # never be created, should that change.
        other.store = os.path.join(os.devnull, "forgestate-needs-no-store")
        return other

    # -- verbs ---------------------------------------------------------------------------
    def checkpoint(
        self,
        agent: str,
        session: str,
        phase: str,
        data: Optional[Mapping[str, Any]] = None,
        *,
        next: Optional[str] = None,
        blockers: Optional[Sequence[str]] = None,
        context_file: Optional[PathLike] = None,
        intent: Optional[str] = None,
        intent_data: Any = None,
        done: Optional[str] = None,
        if_latest: Optional[str] = None,
        merge: bool = False,
        parent: Optional[str] = None,
        id: Optional[str] = None,
    ) -> Saved:
        """Posts a ``[CHECKPOINT]``: the phase ``agent`` reached in ``session``, with the state
        it needs to resume. The handoff: ``next`` the next step in one line, ``blockers`` what
        stands in the way (one line each), ``context_file`` a file whose hash is recorded so
        :meth:`resume` can tell whether it changed. A record the forge cannot take now is
        spooled to the outbox (see :attr:`Saved.spooled`), unless the client is ``strict``.

        Sessions: ``intent`` (with ``intent_data``, any JSON) records a side effect about to
        happen; :meth:`resume` reports it as :attr:`Resume.pending_intent` until a later
        checkpoint (or ``done=NAME``) confirms it. ``if_latest`` posts only when the session's
        newest record is that id, else raises :class:`~forgestate.errors.Conflict` and posts
        nothing. ``merge`` lays ``data`` over the previous checkpoint's data. ``parent`` is the
        record this one continues from; by default the newest this client wrote or resumed.
        ``id`` is the record's id instead of a fresh one: a UUID another system already gave
        this step (a LangGraph checkpoint id), new to the thread."""
        if intent is None and intent_data is not None:
            raise DataError("intent_data needs an intent: name the side effect it describes")
        saved = self._saved(
            "checkpoint",
            agent=agent,
            session=session,
            phase=phase,
            data=_data(data),
            next=next,
            blockers=_lines(blockers),
            context_file=_path(context_file),
            intent=intent,
            intent_data=intent_data,
            done=done,
            if_latest=if_latest,
            merge=merge,
            parent=parent or self._known(agent, session),
            id=id,
        )
        self._remember(agent, session, saved.id)
        return saved

    def end(
        self, agent: str, session: str, reason: str, *, note: Optional[str] = None
    ) -> Saved:
        """Posts an ``[END]`` record: ``session`` stopped for ``reason`` (``completed``,
        ``interrupted``, ``error`` or ``user_stop``), with an optional ``note``. :meth:`status`
        then shows it completed or ended, never stalled; :meth:`resume` reports
        :attr:`Resume.ended` beside the last checkpoint's data."""
        saved = self._saved("end", agent=agent, session=session, reason=reason, note=note)
        self._remember(agent, session, saved.id)
        return saved

    def _known(self, agent: str, session: str) -> Optional[str]:
        return self.__dict__.get("_known_ids", {}).get((agent, session))

    def _remember(self, agent: str, session: str, record_id: Optional[str]) -> None:
        """The newest record of (agent, session) this client wrote or resumed: the next
        record's ``Parent:``, with no read to find it."""
        if record_id is not None:
            self.__dict__.setdefault("_known_ids", {})[(agent, session)] = record_id

    def _saved(self, verb: str, **args: Any) -> Saved:
        return Saved._from(self._call(verb, **args), [])

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
        saved = self._saved(
            "health",
            agent=agent,
            session=session,
            metrics=_data(metrics),
            status=status,
            next_check=next_check,
        )
        self._remember(agent, session, saved.id)
        return saved

    def resume(
        self, agent: str, session: str, *, context_file: Optional[PathLike] = None
    ) -> Resume:
        """Where ``agent`` should resume ``session``: the resume point, the last phase and its
        data, with the handoff (``next``, ``blockers``). With ``context_file``,
        :attr:`Resume.context_drift` says whether that file changed since the checkpoint.
        Never a fresh start for a forge it could not read: that raises
        :class:`~forgestate.Offline` when this machine knows nothing either."""
        doc = self._call("resume", agent=agent, session=session,
                         context_file=_path(context_file))
        resumed = Resume._from(doc, [])
        self._remember(agent, session, resumed.latest_id)
        return resumed

    def status(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        *,
        warn_after: Optional[str] = None,
        stalled_after: Optional[str] = None,
    ) -> Status:
        """Who is alive: one row per (agent, session) matching the globs, with a verdict
        (``alive``, ``warning``, ``stalled``, ``paused``, ``completed``), stalled first.
        ``warn_after``/``stalled_after`` (``90s``, ``10m``, ``2h``, or seconds) override the
        configured thresholds for every agent."""
        doc = self._call("status", agent=agent, session=session,
                         warn_after_secs=warn_after, stalled_after_secs=stalled_after)
        return Status._from(doc, [])

    def history(self, session: str, agent: Optional[str] = None, *, diff: bool = False) -> History:
        """Every record of ``session`` in thread order, with the time between them and each
        checkpoint's resume point; ``agent`` a glob; ``diff`` adds the JSON changes between
        each agent's consecutive checkpoints (:attr:`Step.changes`)."""
        return History._from(self._call("history", session=session, agent=agent, diff=diff), [])

    def fork(
        self,
        session: str,
        new_session: str,
        *,
        at: Optional[str] = None,
        agent: Optional[str] = None,
        force: bool = False,
    ) -> Saved:
        """Starts ``new_session`` from the state of a checkpoint of ``session`` (its newest,
        or the record whose id is ``at``; ``agent`` when several agents checkpoint it). The new
        checkpoint names its origin as ``Parent:``. ``force`` forks into a ``new_session``
        that already has records (refused otherwise)."""
        return self._saved("fork", session=session, new_session=new_session, at=at,
                           agent=agent, force=force)

    def latest(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
        *,
        phase: Optional[str] = None,
    ) -> Optional[Record]:
        """The newest matching record (thread order), or ``None``. ``agent`` and ``session``
        match exactly, or as a glob when they hold ``*``, ``?``, ``[``, ``{``; ``phase`` is a
        glob of checkpoint phases."""
        doc = self._call("latest", agent=agent, session=session, kind=kind, phase=phase)
        record = doc.get("record")
        if not isinstance(record, Mapping):
            return None
        return dataclasses.replace(
            Record._from(record),
            warnings=[str(w) for w in doc.get("warnings") or []],
            complete=doc.get("complete") is not False,
            offline=doc.get("offline") is True,
        )

    def list(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
        since: Optional[str] = None,
        limit: Optional[int] = None,
        *,
        phase: Optional[str] = None,
    ) -> List[Record]:
        """Matching records, oldest first. ``since`` is RFC 3339 or an age (``90m``, ``24h``);
        ``limit`` keeps the newest N; ``phase`` a glob of checkpoint phases. :meth:`listing`
        also says what the read noticed."""
        return self.listing(agent, session, kind, since, limit, phase=phase).records

    def listing(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
        since: Optional[str] = None,
        limit: Optional[int] = None,
        invalid: bool = False,
        all: bool = False,
        *,
        phase: Optional[str] = None,
    ) -> Listing:
        """:meth:`list`'s whole answer: the records, ``offline``, ``warnings`` and, with
        ``invalid=True``, the comments that are not valid trusted records. ``all=True`` reads
        the thread's whole history (every rotated-away session issue it continues)."""
        doc = self._call(
            "list",
            agent=agent,
            session=session,
            kind=kind,
            phase=phase,
            since=since,
            limit=int(limit) if limit is not None else None,
            invalid=invalid,
            all=all,
        )
        return Listing._from(doc, [])

    def prune(
        self,
        keep: int = 10,
        *,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        ids: Optional[Sequence[str]] = None,
        yes: bool = False,
    ) -> Dict[str, Any]:
        """Deletes this identity's older records: all but the newest ``keep`` per agent,
        session and kind (``agent``/``session`` globs narrow it), or, with ``ids``, exactly
        those records (``keep`` is then not used). Without ``yes`` it is a dry run: the answer's
        ``delete`` lists what would go; ``deleted`` lists the comment ids that went."""
        if isinstance(ids, str):
            raise DataError("ids must be a list of record ids, not one string; wrap it as [id]")
        return dict(self._call("prune", keep=int(keep), agent=agent, session=session,
                               ids=list(ids) if ids is not None else None, yes=yes))

    def init(self) -> Dict[str, Any]:
        """Finds or creates the session thread: ``{"thread", "author", "created"}``."""
        return dict(self._call("init"))

    def flush(self) -> Dict[str, Any]:
        """Posts what this machine's outbox holds for the configured forge, oldest first, each
        exactly once; :class:`~forgestate.Offline` when the forge is still unreachable. (Every
        verb drains the outbox within a budget anyway.) Runs ``forgestate --json flush`` as a
        process of its own: ``forgestate call`` does not run ``flush`` yet."""
        return dict(self._once(["flush"]).doc or {})

    def publish(
        self, *, warn_after: Optional[str] = None, stalled_after: Optional[str] = None
    ) -> Dict[str, Any]:
        """Writes the status table into the session issue's body between its markers (text
        outside them is kept; an unchanged table is not written): ``status --publish``.
        ``warn_after``/``stalled_after`` as for :meth:`status`. A forge only;
        :class:`~forgestate.ConfigError` on the local store."""
        return dict(self._call("publish", warn_after_secs=warn_after,
                               stalled_after_secs=stalled_after))

    def export(self, to: str) -> Dict[str, Any]:
        """Writes the thread's believed records into a local store in directory ``to``, each
        with its id, original time and author (a rerun writes only what is new)."""
        return dict(self._call("export", to=_path(to)))

    def import_(self, from_: str) -> Dict[str, Any]:
        """Posts the local store in directory ``from_`` to the configured forge, in order, each
        record once by id (a rerun posts nothing new; an interrupted import resumes). Also
        reachable as ``getattr(client, "import")``, the verb's own name."""
        return dict(self._call("import", **{"from": _path(from_)}))

    def render(self, record: Mapping[str, Any]) -> Rendered:
        """The comment body ``checkpoint``/``health`` would post for ``record`` (a mapping with
        ``agent``, ``session``, ``phase`` and ``data``, or a health record's fields; ``id`` and
        ``time`` are kept when given), redacted, with the configured templates."""
        if not isinstance(record, Mapping):
            raise DataError("the record to render must be a mapping of its fields")
        doc = self._call("render", **{str(k): v for k, v in record.items()})
        return Rendered(body=doc.get("body", ""), record=Record._from(_object(doc.get("record"))))

    def parse(self, body: str) -> Record:
        """The record a comment body holds; :class:`~forgestate.DataError` (with ``reason``)
        when it is not one."""
        return Record._from(self._call("parse", body=body))

    def resume_map(self, agent: str = "implementation-worker") -> ResumeMap:
        """The phase table ``agent`` resumes by, as configured."""
        doc = self._call("resume-map", agent=agent)
        return ResumeMap(
            agent=doc.get("agent", agent),
            default=doc.get("default", ""),
            phases=dict(doc.get("phases") or {}),
        )


def _object(doc: Any) -> Mapping[str, Any]:
    return doc if isinstance(doc, Mapping) else {}


def _data(data: Optional[Mapping[str, Any]]) -> Any:
    """A record's data or metrics as sent: an empty object for none. A string stays a value
    (never read as JSON text), so the binary refuses it as not an object."""
    if isinstance(data, str):
        return [data]
    return data if data is not None else {}


def _lines(blockers: Optional[Sequence[str]]) -> Optional[List[str]]:
    if isinstance(blockers, str):
        raise DataError("blockers must be a list of strings, not one string; wrap it as [text]")
    return list(blockers) if blockers is not None else None


def _path(path: Optional[PathLike]) -> Optional[str]:
    return os.fspath(path) if path is not None else None


# `import` is a keyword: the verb's own name is an alias of `Client.import_`.
setattr(Client, "import", Client.import_)
