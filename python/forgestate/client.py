"""The typed Python API: :class:`Client` and the dataclasses its verbs return.

A :class:`Client` holds settings only (store, forge, config file); each verb runs the bundled
``forgestate`` binary once, so the configuration, the outbox, trust and redaction are exactly
the CLI's. Settings not given here come from the same environment variables and config file as
the CLI (``FORGESTATE_URL``, ``FORGESTATE_OWNER``, ``FORGESTATE_REPO``, ``FORGESTATE_TOKEN``,
``FORGESTATE_CONFIG``, ``XDG_*``).
"""

from __future__ import annotations

import dataclasses

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _run
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
        try:
            argv = _joined([*verb, *self._argv()])
            return _run.run(binary, argv, stdin=stdin, env=self._env())
        except ForgestateError as e:
            # The binary's messages name its flags; a Python caller knows parameters.
            raise reworded(e) from None

    def pure(self) -> "Client":
        """This client for the verbs that need no store (``render``, ``parse``): every forge
        setting is dropped, so a half-configured forge (``FORGESTATE_URL`` without an owner)
        cannot fail them. The templates, redaction keys and resume map of the config file
        still apply; the forge token is not known to the redactor then."""
        other = Client.__new__(Client)
        other.__dict__.update(self.__dict__)
        other.url = other.owner = other.repo = other.token_file = None
        other._token = None
        # `--store` overrides any configured forge. `render` and `parse` never open the store;
        # a directory inside the null device can never be created, should that change.
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
        record this one continues from; by default the newest this client wrote or resumed."""
        verb = ["checkpoint", "--agent", agent, "--session", session, "--phase", phase]
        verb += _handoff(next, blockers, context_file)
        if intent is not None:
            verb += ["--intent", intent]
            if intent_data is not None:
                verb += ["--intent-data", _dumps(intent_data, "intent_data")]
        elif intent_data is not None:
            raise DataError("intent_data needs an intent: name the side effect it describes")
        if done is not None:
            verb += ["--done", done]
        if if_latest is not None:
            verb += ["--if-latest", if_latest]
        if merge:
            verb.append("--merge")
        return self._continued(verb, agent, session, parent, "--data", data)

    def end(
        self, agent: str, session: str, reason: str, *, note: Optional[str] = None
    ) -> Saved:
        """Posts an ``[END]`` record: ``session`` stopped for ``reason`` (``completed``,
        ``interrupted``, ``error`` or ``user_stop``), with an optional ``note``. :meth:`status`
        then shows it completed or ended, never stalled; :meth:`resume` reports
        :attr:`Resume.ended` beside the last checkpoint's data."""
        verb = ["end", "--agent", agent, "--session", session, "--reason", reason]
        if note is not None:
            verb += ["--note", note]
        if self.strict:
            verb.append("--strict")
        answer = self._run(verb)
        saved = Saved._from(_object(answer.doc), answer.warnings)
        self._remember(agent, session, saved.id)
        return saved

    def _remember(self, agent: str, session: str, record_id: Optional[str]) -> None:
        """The newest record of (agent, session) this client wrote or resumed: the next
        record's ``Parent:``, with no read to find it."""
        if record_id is not None:
            self.__dict__.setdefault("_known", {})[(agent, session)] = record_id

    def _continued(
        self,
        verb: List[str],
        agent: str,
        session: str,
        parent: Optional[str],
        flag: str,
        data: Optional[Mapping[str, Any]],
    ) -> Saved:
        parent = parent or self.__dict__.get("_known", {}).get((agent, session))
        if parent is not None:
            verb += ["--parent", parent]
        saved = self._save(verb, flag, data)
        self._remember(agent, session, saved.id)
        return saved

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
        saved = self._save(verb, "--metrics", metrics)
        self._remember(agent, session, saved.id)
        return saved

    def _save(self, verb: List[str], flag: str, data: Optional[Mapping[str, Any]]) -> Saved:
        payload = _dumps(data if data is not None else {}, flag[2:])
        if self.strict:
            verb.append("--strict")
        answer = self._run([*verb, flag, "-"], stdin=payload)
        return Saved._from(_object(answer.doc), answer.warnings)

    def resume(
        self, agent: str, session: str, *, context_file: Optional[PathLike] = None
    ) -> Resume:
        """Where ``agent`` should resume ``session``: the resume point, the last phase and its
        data, with the handoff (``next``, ``blockers``). With ``context_file``,
        :attr:`Resume.context_drift` says whether that file changed since the checkpoint.
        Never a fresh start for a forge it could not read: that raises
        :class:`~forgestate.Offline` when this machine knows nothing either."""
        verb = ["resume", "--agent", agent, "--session", session]
        if context_file is not None:
            verb += ["--context-file", os.fspath(context_file)]
        answer = self._run(verb)
        resumed = Resume._from(_object(answer.doc), answer.warnings)
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
        ``warn_after``/``stalled_after`` (``90s``, ``10m``, ``2h``) override the configured
        thresholds for every agent."""
        verb = ["status", *_filters(agent, session, None)]
        for flag, value in (("--warn-after", warn_after), ("--stalled-after", stalled_after)):
            if value is not None:
                verb += [flag, value]
        answer = self._run(verb)
        return Status._from(answer.doc, answer.warnings)

    def history(self, session: str, agent: Optional[str] = None, *, diff: bool = False) -> History:
        """Every record of ``session`` in thread order, with the time between them and each
        checkpoint's resume point; ``agent`` a glob; ``diff`` adds the JSON changes between
        each agent's consecutive checkpoints (:attr:`Step.changes`)."""
        verb = ["history", "--session", session]
        if agent is not None:
            verb += ["--agent", agent]
        if diff:
            verb.append("--diff")
        answer = self._run(verb)
        return History._from(answer.doc, answer.warnings)

    def fork(
        self,
        session: str,
        new_session: str,
        *,
        at: Optional[str] = None,
        agent: Optional[str] = None,
    ) -> Saved:
        """Starts ``new_session`` from the state of a checkpoint of ``session`` (its newest,
        or the record whose id is ``at``; ``agent`` when several agents checkpoint it). The new
        checkpoint names its origin as ``Parent:``."""
        verb = ["fork", "--session", session, "--new-session", new_session]
        if at is not None:
            verb += ["--at", at]
        if agent is not None:
            verb += ["--agent", agent]
        if self.strict:
            verb.append("--strict")
        answer = self._run(verb)
        return Saved._from(_object(answer.doc), answer.warnings)

    def latest(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
    ) -> Optional[Record]:
        """The newest matching record (thread order), or ``None``. ``agent`` and ``session``
        match exactly, or as a glob when they hold ``*``, ``?``, ``[``, ``{``."""
        answer = self._run(["latest", *_filters(agent, session, kind)])
        doc = answer.doc
        # `latest --json` answers `{"record": ..., "warnings": [...]}` (a bare record before).
        if isinstance(doc, Mapping) and "record" in doc and "kind" not in doc:
            doc = doc.get("record")
        if not isinstance(doc, Mapping):
            return None
        complete = not (isinstance(answer.doc, Mapping) and answer.doc.get("complete") is False)
        return dataclasses.replace(Record._from(doc), warnings=answer.warnings, complete=complete)

    def list(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
        since: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[Record]:
        """Matching records, oldest first. ``since`` is RFC 3339 or an age (``90m``, ``24h``);
        ``limit`` keeps the newest N. :meth:`listing` also says what the read noticed."""
        return self.listing(agent, session, kind, since, limit).records

    def listing(
        self,
        agent: Optional[str] = None,
        session: Optional[str] = None,
        kind: Optional[str] = None,
        since: Optional[str] = None,
        limit: Optional[int] = None,
        invalid: bool = False,
        all: bool = False,
    ) -> Listing:
        """:meth:`list`'s whole answer: the records, ``offline``, ``warnings`` and, with
        ``invalid=True``, the comments that are not valid trusted records. ``all=True`` reads
        the thread's whole history (every rotated-away session issue it continues)."""
        verb = ["list", *_filters(agent, session, kind)]
        if since is not None:
            verb += ["--since", since]
        if limit is not None:
            verb += ["--limit", str(int(limit))]
        if invalid:
            verb += ["--invalid"]
        if all:
            verb += ["--all"]
        answer = self._run(verb)
        return Listing._from(answer.doc, answer.warnings)

    def init(self) -> Dict[str, Any]:
        """Finds or creates the session thread: ``{"thread", "author", "created"}``."""
        return dict(self._run(["init"]).doc or {})

    def flush(self) -> Dict[str, Any]:
        """Posts what this machine's outbox holds for the configured forge, oldest first, each
        exactly once; :class:`~forgestate.Offline` when the forge is still unreachable. (Every
        verb drains the outbox within a budget anyway.)"""
        return dict(self._run(["flush"]).doc or {})

    def publish(self) -> Dict[str, Any]:
        """Writes the status table into the session issue's body between its markers (text
        outside them is kept; an unchanged table is not written): ``status --publish``.
        A forge only; :class:`~forgestate.ConfigError` on the local store."""
        return dict(self._run(["publish"]).doc or {})

    def export(self, to: str) -> Dict[str, Any]:
        """Writes the thread's believed records into a local store in directory ``to``, each
        with its id, original time and author (a rerun writes only what is new)."""
        return dict(self._run(["export", f"--to={to}"]).doc or {})

    def import_(self, from_: str) -> Dict[str, Any]:
        """Posts the local store in directory ``from_`` to the configured forge, in order, each
        record once by id (a rerun posts nothing new; an interrupted import resumes). Also
        reachable as ``getattr(client, "import")``, the verb's own name."""
        return dict(self._run(["import", f"--from={from_}"]).doc or {})

    def render(self, record: Mapping[str, Any]) -> Rendered:
        """The comment body ``checkpoint``/``health`` would post for ``record`` (a mapping with
        ``agent``, ``session``, ``phase`` and ``data``, or a health record's fields; ``id`` and
        ``time`` are kept when given), redacted, with the configured templates."""
        doc = _object(self._run(["render", "-"], stdin=_dumps(dict(record), "record")).doc)
        return Rendered(body=doc.get("body", ""), record=Record._from(_object(doc.get("record"))))

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


def _handoff(
    next: Optional[str], blockers: Optional[Sequence[str]], context_file: Optional[PathLike]
) -> List[str]:
    if isinstance(blockers, str):
        raise DataError("blockers must be a list of strings, not one string; wrap it as [text]")
    argv: List[str] = []
    if next is not None:
        argv += ["--next", next]
    for blocker in blockers or ():
        argv += ["--blocker", blocker]
    if context_file is not None:
        argv += ["--context-file", os.fspath(context_file)]
    return argv


def _object(doc: Any) -> Mapping[str, Any]:
    return doc if isinstance(doc, Mapping) else {}


#: The flags that take a value; :func:`_joined` hands each its value in one argument.
_VALUE_FLAGS = frozenset(
    "--agent --session --phase --status --next-check --context-file --warn-after "
    "--stalled-after --at --new-session --since --limit --next --blocker --kind --data "
    "--metrics --config --store --url --owner --repo --token-file".split()
)


def _joined(argv: Sequence[str]) -> List[str]:
    """``argv`` with each value flag and its value joined as ``--flag=value``, so a value that
    starts with a dash (a session ``-1``, a next step ``--dry-run first``) is read as the value,
    not refused as an unknown flag."""
    out: List[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in _VALUE_FLAGS and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _filters(agent: Optional[str], session: Optional[str], kind: Optional[str]) -> List[str]:
    argv: List[str] = []
    for flag, value in (("--agent", agent), ("--session", session), ("--kind", kind)):
        if value is not None:
            argv += [flag, value]
    return argv


def _dumps(value: Any, what: str) -> str:
    try:
        return _run.dumps(value)
    except (TypeError, ValueError) as e:
        raise DataError(f"{what} cannot be written as JSON: {e}") from e


# `import` is a keyword: the verb's own name is an alias of `Client.import_`.
setattr(Client, "import", Client.import_)
