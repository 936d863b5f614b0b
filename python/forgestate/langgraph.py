"""A LangGraph checkpointer that keeps a graph's state in the forgestate thread people read.

``ForgeStateSaver(client)`` is a :class:`langgraph.checkpoint.base.BaseCheckpointSaver` over a
:class:`forgestate.Client` (a forge or the local store). Every LangGraph checkpoint is one
``[CHECKPOINT]`` record, its pending writes are records of their own, and every verb runs in the
client's one long-lived ``forgestate call --lines`` child: a ``put`` is one request to the forge.
The mapping (docs/langgraph.md):

- ``thread_id`` is the record's session;
- ``checkpoint_ns`` picks the agent: ``langgraph`` for the root graph, ``langgraph|<ns>`` for a
  subgraph, so each namespace is its own ``Parent:`` chain; the namespace is also in the data;
- ``checkpoint_id`` is the record's ``Id``, ``parent_checkpoint_id`` its ``Parent:``;
- the phase is the node the graph runs next (``branch:to:<node>``), ``input`` for the input
  checkpoint, ``__end__`` when nothing is scheduled;
- the data's ``langgraph`` object holds the checkpoint: channel values as plain JSON where they
  are JSON (readable in the issue), else LangGraph's serializer's bytes in base64.

Pending writes are records of agent ``langgraph.writes`` (a chain of their own, so they never
look like a second writer of the checkpoints' chain). Deleting (``delete_thread``, ``prune``,
``delete_for_runs``) runs forgestate's ``prune`` on exactly those records; ``copy_thread`` runs
``fork`` for each record, so ``history`` of the new thread shows where each step came from.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import os
import unicodedata
import uuid
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        get_checkpoint_id,
        get_checkpoint_metadata,
    )
except ImportError as e:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "forgestate.langgraph needs LangGraph: pip install 'forgestate[langgraph]'"
    ) from e

try:
    from langgraph.checkpoint.base import writes_sort_key
except ImportError:  # older langgraph-checkpoint: the order writes were given in

    def writes_sort_key(task_path: str, task_id: str = "", idx: int = 0) -> Tuple[str, str, int]:
        return (task_path, task_id, idx)


from .client import AsyncClient, Client
from .errors import ConfigError, DataError, Fenced, Offline, StorageError

__all__ = ["ForgeStateSaver"]

#: A generator of client calls: it yields ``(verb, arguments)``, is sent each answer (or thrown
#: its error), and returns its result (see ``ForgeStateSaver._drive``).
Steps = Generator[Tuple[str, Dict[str, Any]], Any, Any]

log = logging.getLogger("forgestate.langgraph")

#: The data key of every record this saver writes, and the layout's version inside it.
KEY = "langgraph"
LAYOUT = 1
#: JSON numbers every JSON reader keeps exactly (beyond it an integer travels as bytes).
_EXACT_INT = 2**53
#: Characters a forgestate name may not hold (globs) and the longest name it takes.
_GLOB = set("*?[]{}")
_MAX_NAME = 200
#: Verbs that never open the store (a ``ConfigError`` of theirs is never a missing issue).
_NO_STORE = frozenset({"render", "parse"})


class ForgeStateSaver(BaseCheckpointSaver):
    """LangGraph's checkpointer over forgestate: ``ForgeStateSaver(forgestate.Client(...))``.

    ``agent`` names the writer in the thread (default ``langgraph``); ``writer`` the saver's
    writer (default ``FORGESTATE_WRITER``, else one of its own): once another writer took a
    thread over, its next read or ``put`` raises :class:`forgestate.Fenced` (docs/langgraph.md,
    "Ownership"). The saver is safe to use from several threads (the client serialises its
    calls) and from asyncio: the ``a*`` methods run the same steps with an
    :class:`~forgestate.AsyncClient` of the same settings, so the event loop never waits on a
    call (no thread per call)."""

    def __init__(self, client: Client, *, agent: str = "langgraph", serde: Any = None,
                 check_owner: bool = False, writer: Optional[str] = None) -> None:
        super().__init__(serde=serde)
        if not isinstance(client, Client):
            raise TypeError("ForgeStateSaver needs a forgestate.Client")
        if not agent or _GLOB & set(agent) or len(agent) > _MAX_NAME - len(".writes"):
            raise ValueError(
                f"agent {agent!r} cannot name the saver's records: give a name of at most "
                f"{_MAX_NAME - len('.writes')} characters with none of * ? [ ] {{ }}"
            )
        self.client = client
        #: The same settings for the ``a*`` methods: a child of its own, driven by asyncio.
        self.aclient = client._copy(AsyncClient)
        self.agent = agent = unicodedata.normalize("NFC", agent)
        self.writes_agent = f"{agent}.writes"
        #: This saver's writer (the ``Writer:`` of every record it posts): ``writer``, else
        #: ``FORGESTATE_WRITER`` (the writer a supervisor handed the thread to with ``resume
        #: --take-over --writer NAME``), else one of its own, so two savers on one thread are two
        #: writers and :meth:`take_over` fences the other out (docs/langgraph.md, "Ownership").
        self.writer = (writer or os.environ.get("FORGESTATE_WRITER", "")).strip() or (
            f"langgraph-{uuid.uuid4().hex[:16]}"
        )
        #: Every ``put`` reads the thread first (one more request) and raises
        #: :class:`forgestate.Fenced`, posting nothing, once another saver took the thread over
        #: (without it, a ``put`` raises once a read of this saver saw the takeover).
        self.check_owner = check_owner
        #: (thread, agent) -> the newest takeover this saver's reads saw: (owner, when, its id),
        #: or ``None`` when a read of the pair found none. A ``put`` to a pair another writer
        #: owns raises :class:`forgestate.Fenced` instead of posting what every reader ignores.
        self._owners: Dict[Tuple[str, str], Optional[Tuple[str, str, str]]] = {}
        #: A call of this saver reached the store: a ``ConfigError`` is no longer taken for a
        #: repository with no session issue yet (see :meth:`_drive`).
        self._ready = False

    # -- names ---------------------------------------------------------------------------

    def agent_for(self, ns: str) -> str:
        """The agent of namespace ``ns``'s checkpoints: the saver's own for the root graph."""
        if not ns:
            return self.agent
        name = f"{self.agent}|{ns}"
        if (
            len(name) > _MAX_NAME
            or _GLOB & set(name)
            or not name.isprintable()
            or name != name.strip()
            or "```" in name
        ):
            name = f"{self.agent}|ns-{hashlib.sha256(ns.encode()).hexdigest()[:16]}"
        return name

    def _ours(self, agent: str) -> bool:
        return (
            agent == self.agent
            or agent == self.writes_agent
            or agent.startswith(self.agent + "|")
        )

    # -- reading the thread --------------------------------------------------------------

    def _read(
        self,
        thread_id: Optional[str],
        *,
        agent: Optional[str] = None,
        phase: Optional[str] = None,
        index: Optional["_Index"] = None,
    ) -> Steps:
        """This saver's records of ``thread_id`` (every thread when ``None``; ``agent`` and
        ``phase`` narrow the read), indexed in thread order."""
        records = (yield ("list", dict(agent=agent, session=thread_id, phase=phase))).records
        index = index if index is not None else _Index()
        for r in records:
            # The read's names are globs: a thread id holding `*` matches others too.
            if thread_id is not None and r.session != thread_id:
                continue
            self._index(index, r)
        return index

    def _chain(self, thread_id: str, ns: str) -> Steps:
        """The namespace's whole chain: its checkpoints and the thread's writes, in two reads."""
        index = yield from self._read(thread_id, agent=self.agent_for(ns))
        return (yield from self._read(thread_id, agent=self.writes_agent, index=index))

    def _index(self, index: "_Index", r: Any) -> bool:
        """Adds record ``r`` to ``index`` when it is one of this saver's; whether it was."""
        if r.kind == "takeover" and self._ours(r.agent) and r.writer:
            # Thread order: the newest takeover of the pair is the last one seen.
            self._owners[(r.session, r.agent)] = (r.writer, r.time, r.id or "")
            return False
        if r.kind != "checkpoint" or not self._ours(r.agent):
            return False
        if r.fenced:
            # Posted by a saver after another took the thread over: no state of the thread
            # (`get_tuple`, `list` and `keep_latest` never see it); deleting the thread
            # deletes it too.
            if r.id is not None:
                index.fenced.setdefault(r.session, []).append(r.id)
            return False
        doc = r.data.get(KEY) if isinstance(r.data, Mapping) else None
        if not isinstance(doc, Mapping) or doc.get("layout") != LAYOUT:
            return False
        if r.redacted:
            log.warning(
                "record %s of thread %s had values redacted as secrets, so it cannot be "
                "restored; it is skipped", r.id, r.session,
            )
            return False
        if doc.get("digest") != _digest(doc):
            # Edited by hand (or cut): never a state made up of what is left. The record is
            # indexed as unreadable, so an answer that needs it says so.
            doc = {**doc, "unreadable": "its data no longer matches its digest: it was edited"}
        index.add(r.session, r.id, r.agent, doc)
        return True

    def _learn_owner(self, thread_id: str, agent: str, owner: Any) -> None:
        """Keeps what a read of the pair said about its owner (a ``Takeover``, or none)."""
        if owner is not None and owner.owner:
            self._owners[(thread_id, agent)] = (owner.owner, owner.at, owner.record_id or "")
        else:
            self._owners[(thread_id, agent)] = None

    def _refuse_fenced(self, thread_id: str, ns: str, agents: Sequence[str]) -> None:
        """Raises :class:`forgestate.Fenced` when a read of this saver saw another writer take
        one of ``agents``' pairs of the thread over: every reader would ignore what it posts."""
        for agent in agents:
            known = self._owners.get((thread_id, agent))
            if known is not None and known[0] != self.writer:
                owner, at, takeover = known
                raise Fenced(
                    f"fenced: thread {thread_id} was taken over by writer {owner} (at {at}, "
                    f"takeover record {takeover}); this saver writes as {self.writer}, so every "
                    f"reader would ignore its checkpoints, and nothing was posted. "
                    f"{self._continue_hint(thread_id, ns, owner)}"
                )

    def _continue_hint(self, thread_id: str, ns: str, owner: Optional[str]) -> str:
        ns_arg = f", {ns!r}" if ns else ""
        as_owner = (
            f"; or run it as the owner: ForgeStateSaver(client, writer={owner!r}) or "
            f"FORGESTATE_WRITER={owner}" if owner else ""
        )
        return (
            f"To continue the thread with this saver, take it over: "
            f"saver.take_over({thread_id!r}{ns_arg}){as_owner}"
        )

    def _newest(self, thread_id: str, ns: str) -> Steps:
        """The thread's newest checkpoint of ``ns`` and its pending writes from ``resume`` and
        ``latest`` answers (the read cache's summary: no scan of the thread), or ``None`` when that
        shortcut does not apply (names holding glob characters, a newest record that is not
        restorable). Writes of a checkpoint come after it in the thread, so when the newest
        writes record is older than the checkpoint, it has none; otherwise they are listed."""
        agent = self.agent_for(ns)
        if _GLOB & set(thread_id + agent):
            return None
        # `resume` answers the newest unfenced checkpoint as `latest` does, in the same one
        # read, names the pair's owner when it was taken over, and refuses a writer that wrote
        # to the pair before another took it over (a run would post only what readers ignore).
        try:
            resumed = yield ("resume", dict(agent=agent, session=thread_id, writer=self.writer))
        except Fenced as e:
            raise Fenced(f"{e.message}. {self._continue_hint(thread_id, ns, None)}",
                         code=e.code, reason=e.reason) from e
        self._learn_owner(thread_id, agent, resumed.owner)
        newest = resumed.checkpoint
        if newest is None:
            return _Index()
        index = _Index()
        if not self._index(index, newest) or not index.checkpoints.get((thread_id, ns)):
            return None
        (cid,) = index.checkpoints[(thread_id, ns)]
        try:
            writes = (yield ("latest", dict(
                agent=self.writes_agent, session=thread_id, kind="checkpoint"))).record
        except Offline:
            # The forge is down and this machine knows of no writes: the checkpoint (answered
            # from this machine's copy) is all it knows, as every offline answer is.
            writes = None
        if writes is None or _before(writes, newest):
            return index
        if _GLOB & set(cid):
            return None
        return (yield from self._read(thread_id, agent=self.writes_agent,
                                      phase=_writes_phase(cid), index=index))

    def _tuple(self, thread_id: str, ns: str, cp: "_Stored", index: "_Index") -> CheckpointTuple:
        """The checkpoint tuple of ``cp``; a record this saver cannot read (a comment edited by
        hand, say) is a :class:`DataError` naming it, never a state made up of what was left."""
        try:
            return self._decoded(thread_id, ns, cp, index)
        except Exception as e:  # noqa: BLE001 - anything a hand-edited body can make decoding do
            record = cp.record_id or "without an id"
            raise DataError(
                f"record {record} of thread {thread_id} holds LangGraph data this saver cannot "
                f"read ({type(e).__name__}: {e}); was the comment edited? To resume from the "
                f"checkpoint before it, delete it: forgestate prune --id {record} --yes"
            ) from e

    def _decoded(
        self, thread_id: str, ns: str, cp: "_Stored", index: "_Index"
    ) -> CheckpointTuple:
        if cp.unreadable:
            raise ValueError(cp.unreadable)
        bad = index.bad_writes.get((thread_id, ns, cp.checkpoint_id))
        if bad is not None:
            raise ValueError(f"its pending writes (record {bad[0]}): {bad[1]}")
        checkpoint = dict(_decode_pairs(self.serde, cp.doc.get("checkpoint")))
        for key in ("v", "id", "ts", "channel_versions", "versions_seen"):
            if key not in checkpoint:
                raise ValueError(f"its checkpoint has no {key}")
        if checkpoint["id"] != cp.checkpoint_id or not isinstance(cp.doc.get("values"), list):
            raise ValueError("its checkpoint id or values do not read")
        versions = checkpoint.get("channel_versions") or {}
        values = _decode_values(self.serde, cp.doc.get("values"))
        checkpoint["channel_values"] = {k: v for k, v in values.items() if k in versions}
        metadata = dict(_decode_pairs(self.serde, cp.doc.get("metadata")))
        writes = index.writes.get((thread_id, ns, cp.checkpoint_id), {})
        pending = [
            (w.task_id, w.channel, _decode_value(self.serde, w.value))
            for w in sorted(writes.values(), key=lambda w: writes_sort_key(w.task_path, w.task_id, w.idx))
        ]
        parent = cp.doc.get("parent_checkpoint_id")
        return CheckpointTuple(
            config=_config(thread_id, ns, cp.checkpoint_id),
            checkpoint=checkpoint,  # type: ignore[arg-type]
            metadata=metadata,  # type: ignore[arg-type]
            parent_config=_config(thread_id, ns, parent) if isinstance(parent, str) else None,
            pending_writes=pending,
        )

    def get_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        """The checkpoint ``config`` names, or the thread's newest in its namespace."""
        return self._drive(self._get_tuple(config))

    async def aget_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        return await self._adrive(self._get_tuple(config))

    def _get_tuple(self, config: RunnableConfig) -> Steps:
        """The checkpoint ``config`` names, or the thread's newest in its namespace (thread
        order, as every forgestate read: LangGraph's largest id whenever writers' clocks agree)."""
        thread_id = _thread(config["configurable"]["thread_id"])
        ns = _ns(config["configurable"].get("checkpoint_ns"))
        wanted = get_checkpoint_id(config)
        index = yield from self._newest(thread_id, ns)
        found = index.checkpoints.get((thread_id, ns), {}) if index is not None else {}
        if index is None or (wanted and wanted not in found):
            # Another checkpoint than the newest: the namespace's whole chain.
            index = yield from self._chain(thread_id, ns)
            found = index.checkpoints.get((thread_id, ns), {})
        if wanted:
            cp = found.get(wanted)
        else:
            cp = found[next(reversed(found))] if found else None
        return self._tuple(thread_id, ns, cp, index) if cp is not None else None

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        """LangGraph's ancestor walk for ``DeltaChannel``, over one read of the chain."""
        return self._drive(self._delta(config, channels))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return await self._adrive(self._delta(config, channels))

    def _delta(self, config: RunnableConfig, channels: Sequence[str]) -> Steps:
        """LangGraph's ancestor walk for ``DeltaChannel`` (the base class's contract), over one
        read of the namespace's chain instead of one read per ancestor."""
        if not channels:
            return {}
        thread_id = _thread(config["configurable"]["thread_id"])
        ns = _ns(config["configurable"].get("checkpoint_ns"))
        index = yield from self._chain(thread_id, ns)
        found = index.checkpoints.get((thread_id, ns), {})
        wanted = get_checkpoint_id(config) or (next(reversed(found)) if found else None)
        target = found.get(wanted) if wanted else None
        collected: Dict[str, List[Any]] = {c: [] for c in channels}
        seeds: Dict[str, Any] = {}
        remaining = set(channels)
        parent = target.doc.get("parent_checkpoint_id") if target else None
        seen = set()
        while isinstance(parent, str) and parent in found and parent not in seen and remaining:
            seen.add(parent)
            tup = self._tuple(thread_id, ns, found[parent], index)
            for write in reversed(tup.pending_writes or []):
                if write[1] in remaining:
                    collected[write[1]].append(write)
            for ch in list(remaining):
                if ch in tup.checkpoint["channel_values"]:
                    seeds[ch] = tup.checkpoint["channel_values"][ch]
                    remaining.discard(ch)
            parent = found[parent].doc.get("parent_checkpoint_id")
        result: Dict[str, Any] = {}
        for ch in channels:
            entry: Dict[str, Any] = {"writes": list(reversed(collected[ch]))}
            if ch in seeds:
                entry["seed"] = seeds[ch]
            result[ch] = entry
        return result

    def list(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first (thread order): of ``config``'s thread (and namespace, when
        it names one), or of every thread; ``filter`` matches metadata, ``before`` keeps the
        checkpoints whose ids sort before its id (LangGraph's ids sort by creation time)."""
        thread_id = _thread(config["configurable"]["thread_id"]) if config else None
        index = self._drive(self._read(thread_id))
        yield from self._listed(index, config, filter, before, limit)

    async def alist(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> AsyncIterator[CheckpointTuple]:
        thread_id = _thread(config["configurable"]["thread_id"]) if config else None
        index = await self._adrive(self._read(thread_id))
        for tup in self._listed(index, config, filter, before, limit):
            yield tup

    def _listed(
        self,
        index: "_Index",
        config: Optional[RunnableConfig],
        filter: Optional[Dict[str, Any]],
        before: Optional[RunnableConfig],
        limit: Optional[int],
    ) -> Iterator[CheckpointTuple]:
        ns_wanted = config["configurable"].get("checkpoint_ns") if config else None
        ns_wanted = _ns(ns_wanted) if ns_wanted is not None else None
        id_wanted = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        left = limit
        for (tid, ns), found in index.checkpoints.items():
            if ns_wanted is not None and ns != ns_wanted:
                continue
            for cid in reversed(found):
                if id_wanted and cid != id_wanted:
                    continue
                if before_id and cid >= before_id:
                    continue
                tup = self._tuple(tid, ns, found[cid], index)
                if filter and not all(tup.metadata.get(k) == v for k, v in filter.items()):
                    continue
                if left is not None:
                    if left <= 0:
                        return
                    left -= 1
                yield tup

    # -- writing ---------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Posts ``checkpoint`` as one ``[CHECKPOINT]`` record."""
        return self._drive(self._put(config, checkpoint, metadata, new_versions))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._adrive(self._put(config, checkpoint, metadata, new_versions))

    def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Steps:
        """Posts ``checkpoint`` as one ``[CHECKPOINT]`` record (one request to a forge)."""
        thread_id = _thread(config["configurable"]["thread_id"])
        ns = _ns(config["configurable"].get("checkpoint_ns"))
        parent = config["configurable"].get("checkpoint_id")
        rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        values = checkpoint.get("channel_values") or {}
        full_metadata = get_checkpoint_metadata(config, metadata)
        hidden: List[Any] = []
        doc = {
            "layout": LAYOUT,
            "ns": ns,
            "checkpoint_id": checkpoint["id"],
            "parent_checkpoint_id": parent,
            "values": [
                {"channel": str(k), **_encode_value(self.serde, v, hidden)}
                for k, v in values.items()
            ],
            "checkpoint": _encode_pairs(self.serde, rest, hidden),
            "metadata": _encode_pairs(self.serde, full_metadata, hidden),
        }
        yield from self._post(
            thread_id,
            self.agent_for(ns),
            _phase(checkpoint, metadata, new_versions),
            doc,
            record_id=checkpoint["id"] if _is_uuid(checkpoint["id"]) else None,
            parent=parent if isinstance(parent, str) and _is_uuid(parent) else None,
            hidden=hidden,
        )
        return _config(thread_id, ns, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Posts a task's writes, not yet in a checkpoint, as one record of their own."""
        self._drive(self._put_writes(config, writes, task_id, task_path))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._adrive(self._put_writes(config, writes, task_id, task_path))

    def _put_writes(
        self, config: RunnableConfig, writes: Sequence[Tuple[str, Any]], task_id: str,
        task_path: str,
    ) -> Steps:
        if not writes:
            return
        thread_id = _thread(config["configurable"]["thread_id"])
        ns = _ns(config["configurable"].get("checkpoint_ns"))
        checkpoint_id = config["configurable"]["checkpoint_id"]
        hidden: List[Any] = []
        doc = {
            "layout": LAYOUT,
            "kind": "writes",
            "ns": ns,
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "writes": [
                {"idx": WRITES_IDX_MAP.get(c, i), "channel": c,
                 **_encode_value(self.serde, v, hidden)}
                for i, (c, v) in enumerate(writes)
            ],
        }
        yield from self._post(thread_id, self.writes_agent, _writes_phase(checkpoint_id), doc,
                              hidden=hidden)

    def _post(
        self,
        thread_id: str,
        agent: str,
        phase: str,
        doc: Dict[str, Any],
        *,
        record_id: Optional[str] = None,
        parent: Optional[str] = None,
        hidden: Sequence[Any] = (),
    ) -> Steps:
        ns = doc["ns"]
        self._refuse_fenced(thread_id, ns, [agent, self.agent_for(ns)])
        yield from self._refuse_hidden_secrets(thread_id, hidden)
        doc["digest"] = _digest(doc)
        try:
            saved = yield ("checkpoint", dict(agent=agent, session=thread_id, phase=phase,
                                              data={KEY: doc}, id=record_id, parent=parent,
                                              writer=self.writer,
                                              check_owner=self.check_owner))
        except Fenced as e:
            # `check_owner`'s refusal: the CLI's words, and how to go on with a saver.
            raise Fenced(f"{e.message}. {self._continue_hint(thread_id, ns, None)}",
                         code=e.code, reason=e.reason) from e
        except DataError as e:
            if "byte limit" not in str(e):
                raise
            raise DataError(
                f"thread {thread_id}: the graph's state is too large for one record ({e}). A "
                "record holds at most max_body_bytes (256 KiB by default, 1 MiB at most); keep "
                "large blobs out of the graph's state and store a reference to them instead"
            ) from e
        if saved.record.redacted:
            raise DataError(
                f"thread {thread_id}: {saved.record.redacted} value(s) of the graph's state look "
                "like secrets and were replaced by [REDACTED] in the thread, so this checkpoint "
                "could not be restored (it is skipped when reading). Keep secrets out of graph "
                "state, or change [redact] keys in the configuration if these are not secrets"
            )

    def _refuse_hidden_secrets(self, thread_id: str, hidden: Sequence[Any]) -> Steps:
        """Values that travel in base64 are out of the redactor's sight, so before anything is
        posted their readable form is run through it (``render``: no request to the store), in
        chunks; a secret found there refuses the put, as a redacted JSON value does."""
        if not hidden:
            return
        text = json.dumps([_readable(v) for v in hidden], ensure_ascii=False)
        chunks = [text[i:i + _SCAN_CHUNK + _SCAN_OVERLAP] for i in range(0, len(text), _SCAN_CHUNK)]
        for start in range(0, len(chunks), _SCAN_BATCH):
            rendered = yield ("render", dict(
                agent=self.agent, session=thread_id, phase="secret_check",
                data={"scan": chunks[start:start + _SCAN_BATCH]},
            ))
            if rendered.record.redacted:
                raise DataError(
                    f"thread {thread_id}: a value of the graph's state that is not JSON (it would "
                    "travel in base64) holds what looks like a secret, so the checkpoint was not "
                    "posted. Keep secrets out of graph state, or change redact_keys in the "
                    "configuration if these are not secrets"
                )

    # -- deleting and copying ---------------------------------------------------------------

    def _delete(self, record_ids: Sequence[str], what: str) -> Steps:
        if not record_ids:
            return
        answer = yield ("prune", dict(ids=list(record_ids), yes=True))
        left = answer.kept_other_authors
        if left:
            raise StorageError(
                f"{what}: {left} record(s) were posted by another account and stay; delete them "
                "with that account's token (forgestate prune --id ...)"
            )

    # -- ownership ---------------------------------------------------------------------------

    def take_over(self, thread_id: str, checkpoint_ns: str = "") -> None:
        """Makes this saver the only writer of ``thread_id`` (namespace ``checkpoint_ns``): a
        ``[TAKEOVER]`` record for its checkpoints and one for its pending writes. From then on
        every reader ignores what another saver posts to the thread, and that saver's next read
        of it (``get_tuple``) or ``put`` raises :class:`forgestate.Fenced`."""
        self._drive(self._take_over(thread_id, checkpoint_ns))

    async def atake_over(self, thread_id: str, checkpoint_ns: str = "") -> None:
        await self._adrive(self._take_over(thread_id, checkpoint_ns))

    def _take_over(self, thread_id: str, ns: str) -> Steps:
        thread_id, ns = _thread(thread_id), _ns(ns)
        for agent in (self.agent_for(ns), self.writes_agent):
            taken = yield ("resume", dict(agent=agent, session=thread_id, take_over=True,
                                          writer=self.writer))
            self._learn_owner(thread_id, agent, taken.owner)

    def delete_thread(self, thread_id: str) -> None:
        """Deletes every checkpoint and write of ``thread_id`` (forgestate ``prune``)."""
        self._drive(self._delete_thread(thread_id))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._adrive(self._delete_thread(thread_id))

    def _delete_thread(self, thread_id: str) -> Steps:
        thread_id = _thread(thread_id)
        index = yield from self._read(thread_id)
        yield from self._delete(index.ids_of(thread_id), f"delete_thread({thread_id})")

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest`` keeps each namespace's newest checkpoint (and its writes);
        ``delete`` deletes the threads."""
        self._drive(self._prune(thread_ids, strategy))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._adrive(self._prune(thread_ids, strategy))

    def _prune(self, thread_ids: Sequence[str], strategy: str) -> Steps:
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: use keep_latest or delete")
        doomed: List[str] = []
        for tid in map(_thread, thread_ids):
            index = yield from self._read(tid)
            if strategy == "delete":
                doomed += index.ids_of(tid)
                continue
            keep = set()
            for (t, ns), found in index.checkpoints.items():
                if t == tid and found:
                    keep |= {(ns, cid) for cid in self._kept_chain(found)}
            doomed += index.ids_of(tid, lambda ns, cid: (ns, cid) not in keep)
        yield from self._delete(doomed, "prune")

    def _kept_chain(self, found: Mapping[str, "_Stored"]) -> List[str]:
        """What ``keep_latest`` keeps of a namespace: its newest checkpoint and, when that has a
        channel with a version but no value (a ``DeltaChannel`` keeps only a sentinel between
        snapshots and is rebuilt from its ancestors' writes), every ancestor back to one that
        holds a value for each such channel, or to the root. A plain graph keeps one."""
        newest = next(reversed(found))
        kept = [newest]
        doc = found[newest].doc
        versions = dict(_decode_pairs(self.serde, doc.get("checkpoint"))).get("channel_versions")
        missing = {
            str(ch)
            for ch in (versions if isinstance(versions, Mapping) else {})
            if not str(ch).startswith(("__", "branch:")) and str(ch) not in _channels(doc)
        }
        parent = doc.get("parent_checkpoint_id")
        while missing and isinstance(parent, str) and parent in found and parent not in kept:
            kept.append(parent)
            missing -= _channels(found[parent].doc)
            parent = found[parent].doc.get("parent_checkpoint_id")
        return kept

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Deletes the checkpoints (and their writes) whose metadata names one of ``run_ids``."""
        self._drive(self._delete_for_runs(run_ids))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._adrive(self._delete_for_runs(run_ids))

    def _delete_for_runs(self, run_ids: Sequence[str]) -> Steps:
        runs = {str(r) for r in run_ids}
        if not runs:
            return
        index = yield from self._read(None)
        doomed_cps = set()
        for (tid, ns), found in index.checkpoints.items():
            for cid, cp in found.items():
                metadata = dict(_decode_pairs(self.serde, cp.doc.get("metadata")))
                if str(metadata.get("run_id")) in runs:
                    doomed_cps.add((tid, ns, cid))
        doomed: List[str] = []
        for tid in {t for t, _, _ in doomed_cps}:
            doomed += index.ids_of(tid, lambda ns, cid, tid=tid: (tid, ns, cid) in doomed_cps)
        yield from self._delete(doomed, "delete_for_runs")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint and write of the source thread to the target (``fork``)."""
        self._drive(self._copy_thread(source_thread_id, target_thread_id))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._adrive(self._copy_thread(source_thread_id, target_thread_id))

    def _copy_thread(self, source_thread_id: str, target_thread_id: str) -> Steps:
        """Copies every checkpoint and write of the source thread to the target, each by
        forgestate's ``fork``: the copies keep their checkpoint ids, and ``history`` of the
        target shows each as forked from its source record."""
        src, dst = _thread(source_thread_id), _thread(target_thread_id)
        if (yield from self._read(dst)).order.get(dst):
            raise DataError(
                f"copy_thread: thread {dst} already holds checkpoints; a copy over them would "
                f"mix two histories. Delete it first (delete_thread({dst!r})) or copy to a new id"
            )
        index = yield from self._read(src)
        for record_id, agent in index.order.get(src, []):
            yield ("fork", dict(session=src, new_session=dst, at=record_id, agent=agent,
                                force=True))

    # -- running the steps -------------------------------------------------------------------

    def _reached(self, verb: str, answer: Any) -> None:
        """Notes that a call reached the store (an answer from this machine's copy, or a record
        spooled to the outbox, did not: the repository may still have no session issue)."""
        if verb not in _NO_STORE and not getattr(answer, "offline", False) and not getattr(
            answer, "spooled", None
        ):
            self._ready = True

    def _first(self, verb: str) -> bool:
        """Whether a :class:`ConfigError` of ``verb`` may be a repository with no session issue
        yet: no call of this saver reached the store so far."""
        return not self._ready and verb not in _NO_STORE

    def _drive(self, steps: Steps) -> Any:
        """Runs ``steps`` (a generator that yields each client call as ``(verb, arguments)``
        and is sent its answer) with the client, and returns what it returns.

        The saver's first call goes straight to the thread; only when it fails with a
        :class:`ConfigError` (a new repository has no session issue yet) is ``init`` run, as
        ``forgestate init`` (it finds or creates the issue), and the call asked again. So a
        forge that is down when a process starts costs one wait, not ``init``'s and the
        call's."""
        try:
            call = next(steps)
            while True:
                try:
                    try:
                        answer = getattr(self.client, call[0])(**call[1])
                    except ConfigError:
                        if not self._first(call[0]):
                            raise
                        self.client.init()
                        answer = getattr(self.client, call[0])(**call[1])
                    self._reached(call[0], answer)
                except Exception as e:  # noqa: BLE001 - handed to the steps, which may catch it
                    call = steps.throw(e)
                else:
                    call = steps.send(answer)
        except StopIteration as done:
            return done.value

    async def _adrive(self, steps: Steps) -> Any:
        """:meth:`_drive` with the :class:`~forgestate.AsyncClient`: the event loop never
        waits on the child."""
        try:
            call = next(steps)
            while True:
                try:
                    try:
                        answer = await getattr(self.aclient, call[0])(**call[1])
                    except ConfigError:
                        if not self._first(call[0]):
                            raise
                        await self.aclient.init()
                        answer = await getattr(self.aclient, call[0])(**call[1])
                    self._reached(call[0], answer)
                except Exception as e:  # noqa: BLE001 - handed to the steps, which may catch it
                    call = steps.throw(e)
                else:
                    call = steps.send(answer)
        except StopIteration as done:
            return done.value


# -- the index of a read ---------------------------------------------------------------------


@dataclass
class _Stored:
    record_id: Optional[str]
    checkpoint_id: str
    doc: Mapping[str, Any]

    @property
    def unreadable(self) -> Optional[str]:
        why = self.doc.get("unreadable")
        return why if isinstance(why, str) else None


@dataclass
class _Write:
    record_id: Optional[str]
    task_id: str
    task_path: str
    idx: int
    channel: str
    value: Mapping[str, Any]


@dataclass
class _Index:
    #: (thread, ns) -> checkpoint id -> its record (the first record of an id wins).
    checkpoints: Dict[Tuple[str, str], Dict[str, _Stored]] = field(default_factory=dict)
    #: (thread, ns, checkpoint id) -> (task id, idx) -> the write, as LangGraph keeps them.
    writes: Dict[Tuple[str, str, str], Dict[Tuple[str, int], _Write]] = field(default_factory=dict)
    #: thread -> (record id, agent) of every record, in thread order (what a copy forks).
    order: Dict[str, List[Tuple[str, str]]] = field(default_factory=dict)
    #: (thread, ns, checkpoint id) -> why a writes record of it cannot be read, with its id.
    bad_writes: Dict[Tuple[str, str, str], Tuple[Optional[str], str]] = field(default_factory=dict)
    #: record ids of each (thread, ns, checkpoint id): the checkpoint's and its writes'.
    records: Dict[Tuple[str, str, str], List[str]] = field(default_factory=dict)
    #: thread -> record ids of this saver's fenced records (see ``ForgeStateSaver._index``).
    fenced: Dict[str, List[str]] = field(default_factory=dict)

    def add(
        self, thread: str, record_id: Optional[str], agent: str, doc: Mapping[str, Any]
    ) -> None:
        ns = doc.get("ns")
        cid = doc.get("checkpoint_id")
        if not isinstance(ns, str) or not isinstance(cid, str):
            return
        if doc.get("kind") == "writes":
            if isinstance(doc.get("unreadable"), str):
                self.bad_writes.setdefault((thread, ns, cid), (record_id, doc["unreadable"]))
            elif not self._add_writes(thread, ns, cid, record_id, doc):
                return
        else:
            found = self.checkpoints.setdefault((thread, ns), {})
            if cid in found:
                return
            found[cid] = _Stored(record_id, cid, doc)
        if record_id is not None:
            self.records.setdefault((thread, ns, cid), []).append(record_id)
            self.order.setdefault(thread, []).append((record_id, agent))

    def _add_writes(
        self, thread: str, ns: str, cid: str, record_id: Optional[str], doc: Mapping[str, Any]
    ) -> bool:
        task_id = doc.get("task_id")
        writes = doc.get("writes")
        if not isinstance(task_id, str) or not isinstance(writes, list):
            return False
        task_path = doc.get("task_path") if isinstance(doc.get("task_path"), str) else ""
        stored = self.writes.setdefault((thread, ns, cid), {})
        for w in writes:
            if not isinstance(w, Mapping) or not isinstance(w.get("channel"), str):
                continue
            idx = w.get("idx")
            if not isinstance(idx, int):
                continue
            key = (task_id, idx)
            # LangGraph's rule: a regular write is kept once, a special one (error, interrupt,
            # resume, scheduled: idx < 0) is replaced by a later one.
            if idx >= 0 and key in stored:
                continue
            stored[key] = _Write(record_id, task_id, str(task_path), idx, w["channel"], w)
        return True

    def ids_of(self, thread: str, doomed: Any = None) -> List[str]:
        """Record ids of ``thread``'s checkpoints and writes, all (fenced ones too) or where
        ``doomed(ns, cid)``."""
        out: List[str] = []
        for (t, ns, cid), ids in self.records.items():
            if t == thread and (doomed is None or doomed(ns, cid)):
                out += ids
        return out + (self.fenced.get(thread, []) if doomed is None else [])


# -- encoding --------------------------------------------------------------------------------


def _thread(thread_id: Any) -> str:
    """A LangGraph thread id as the session name forgestate stores: NFC, as the CLI normalizes
    every name (so ``"cafe\u0301"`` and ``"caf\u00e9"`` are one thread); one too long for a
    name is a :class:`DataError` (docs/langgraph.md, "Names")."""
    name = unicodedata.normalize("NFC", str(thread_id))
    if len(name) > _MAX_NAME:
        raise DataError(
            f"thread_id {name[:40]!r}... is {len(name)} characters long; a forgestate session "
            f"name (the thread id) is at most {_MAX_NAME}: use a shorter thread id, or a hash of it"
        )
    return name


def _ns(checkpoint_ns: Any) -> str:
    """A checkpoint namespace, NFC like every name (it names the namespace's agent)."""
    return unicodedata.normalize("NFC", str(checkpoint_ns or ""))


def _config(thread_id: str, ns: str, checkpoint_id: Optional[str]) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


#: How a value's readable form is cut for the secret check: chunks well under a record's size,
#: overlapping so a secret across a cut is still whole in one, a few per ``render``.
_SCAN_CHUNK = 48 * 1024
_SCAN_OVERLAP = 512
_SCAN_BATCH = 3


def _readable(value: Any, depth: int = 0) -> Any:
    """A JSON view of any value, for the secret check only: objects as their fields, bytes as
    text, everything else as its string."""
    if depth > 64:
        return None
    if value is None or isinstance(value, (bool, int, str)):
        return value if not isinstance(value, int) or abs(value) < _EXACT_INT else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, Mapping):
        return {str(k): _readable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_readable(v, depth + 1) for v in value]
    for dump in ("model_dump", "dict"):
        method = getattr(value, dump, None)
        if callable(method):
            try:
                return _readable(method(), depth + 1)
            except Exception:  # noqa: BLE001 - a model that cannot dump itself: its fields
                break
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict):
        return {"__type": type(value).__name__, **_readable(fields, depth + 1)}
    return str(value)


def _digest(doc: Mapping[str, Any]) -> str:
    """The SHA-256 of a record's LangGraph data, canonically, without its own digest: a
    comment edited by hand no longer matches it (an accident caught, not tampering: signing is
    forgestate's tamper evidence)."""
    rest = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _is_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` comes back from JSON exactly as it is (so it is kept readable)."""
    if depth > 64:
        return False
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return -_EXACT_INT < value < _EXACT_INT
    if isinstance(value, float):
        return math.isfinite(value)
    if type(value) is list:
        return all(_is_json(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _is_json(v, depth + 1) for k, v in value.items())
    return False


def _encode_value(serde: Any, value: Any, hidden: Optional[List[Any]] = None) -> Dict[str, Any]:
    """``{"json": value}`` for a JSON value, else ``{"type": t, "base64": ...}`` of LangGraph's
    serializer; a value put in base64 is added to ``hidden``, to be checked for secrets."""
    if _is_json(value):
        return {"json": value}
    if hidden is not None:
        hidden.append(value)
    kind, data = serde.dumps_typed(value)
    return {"type": kind, "base64": base64.b64encode(data).decode("ascii")}


def _decode_value(serde: Any, doc: Any) -> Any:
    if not isinstance(doc, Mapping):
        raise DataError("a LangGraph value in the thread is not an object; was it edited?")
    if "json" in doc:
        return doc["json"]
    kind, data = doc.get("type"), doc.get("base64")
    if not isinstance(kind, str) or not isinstance(data, str):
        raise DataError("a LangGraph value in the thread has neither json nor type and base64")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError as e:
        raise DataError(f"a LangGraph value in the thread is not base64: {e}") from e
    return serde.loads_typed((kind, raw))


def _encode_pairs(
    serde: Any, mapping: Mapping[str, Any], hidden: Optional[List[Any]] = None
) -> List[List[Any]]:
    """A mapping as ``[[key, value], ...]`` (``[key, type, base64]`` for a value that is not
    JSON): names (channels, nodes) never become JSON keys, so one called ``auth_token`` is not
    taken for a secret and its value redacted."""
    out: List[List[Any]] = []
    for k, v in mapping.items():
        doc = _encode_value(serde, v, hidden)
        out.append([str(k), doc["json"]] if "json" in doc else [str(k), doc["type"], doc["base64"]])
    return out


def _decode_pairs(serde: Any, pairs: Any) -> Iterator[Tuple[str, Any]]:
    if not isinstance(pairs, list):
        return
    for pair in pairs:
        if not isinstance(pair, list) or not pair or not isinstance(pair[0], str):
            continue
        if len(pair) == 2:
            yield pair[0], pair[1]
        elif len(pair) == 3:
            yield pair[0], _decode_value(serde, {"type": pair[1], "base64": pair[2]})


def _channels(doc: Mapping[str, Any]) -> set:
    """The channels a checkpoint record holds a value for."""
    values = doc.get("values")
    return {
        v["channel"] for v in (values if isinstance(values, list) else [])
        if isinstance(v, Mapping) and isinstance(v.get("channel"), str)
    }


def _decode_values(serde: Any, values: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for v in values if isinstance(values, list) else []:
        if isinstance(v, Mapping) and isinstance(v.get("channel"), str):
            out[v["channel"]] = _decode_value(serde, v)
    return out


def _before(a: Any, b: Any) -> bool:
    """Whether record ``a`` is earlier in the thread than record ``b``: by comment id, which
    the store hands out in order. A record not posted yet (in the outbox) is never earlier."""
    ca, cb = getattr(a.comment, "id", None), getattr(b.comment, "id", None)
    return isinstance(ca, int) and isinstance(cb, int) and ca < cb


def _writes_phase(checkpoint_id: str) -> str:
    """The phase of a writes record: the checkpoint it belongs to, so a read can ask for them."""
    return f"writes:{checkpoint_id}"[:_MAX_NAME]


def _is_uuid(text: Any) -> bool:
    """Whether ``text`` is a UUID in its hyphenated form, as a record id must be."""
    if not isinstance(text, str) or len(text) != 36:
        return False
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _phase(checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: Any) -> str:
    """The record's phase: the node(s) the graph runs next, ``input``, or ``__end__``."""
    updated = checkpoint.get("updated_channels") or list(new_versions or {})
    scheduled = sorted({c[len("branch:to:"):] for c in updated if str(c).startswith("branch:to:")})
    if scheduled:
        phase = "+".join(scheduled)
    elif (metadata or {}).get("source") == "input":
        phase = "input"
    else:
        phase = "__end__"
    clean = "".join("_" if (c in _GLOB or not c.isprintable()) else c for c in phase).strip()
    return clean[:_MAX_NAME] or "step"
