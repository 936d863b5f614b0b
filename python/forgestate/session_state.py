"""A drop-in for the CleverAgents ``session_state`` functions, backed by forgestate.

Switch with one import line::

    from forgestate.session_state import save_state, resume_implementation

Same names, arguments and return shapes as the seed's functions; underneath, everything is the
``forgestate`` binary's (thread order, trusted authors, the outbox, redaction, resume-map globs).
``owner, repo`` name the forge repository; the URL and token come from the CLI's environment
variables and config file. With no forge configured, records go to the local store.
"""

from __future__ import annotations

import re
import types
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from .client import Client
from .errors import DataError, ForgestateError

__all__ = [
    "SESSION_STATE_TITLE_PATTERN", "CHECKPOINT_VERSION", "PHASE_RESUME_MAP", "configure",
    "find_session_state_issue", "create_checkpoint", "format_checkpoint_comment",
    "save_checkpoint", "save_state", "parse_checkpoint_comment", "load_latest_checkpoint",
    "resume_agent_work", "resume_implementation", "post_health_signal", "end_session",
]

#: The session issue's title (forgestate's default; ``forge.title`` changes it).
SESSION_STATE_TITLE_PATTERN = "[Automated] CleverAgents Build Session"
#: The record version forgestate writes.
CHECKPOINT_VERSION = "2.0"

_IMPLEMENTATION_WORKER = "implementation-worker"
_client: Optional[Client] = None
_phase_map: Optional[types.MappingProxyType] = None
#: The clients used, per (owner, repo) and for the pure functions, each with its one child for
#: the process (``configure`` closes them). The child keeps the lineage (each record's ``Parent:``).
_clients: Dict[Any, Client] = {}


def configure(client: Optional[Client]) -> None:
    """Use ``client``'s settings (store, config file, token, binary) for every function here;
    ``None`` goes back to the environment and config file alone."""
    global _client, _phase_map
    _client = client
    _phase_map = None
    for used in _clients.values():
        if used is not client:
            used.close()
    _clients.clear()


def _for(owner: Optional[str], repo: Optional[str]) -> Client:
    key = (owner, repo) if owner and repo else None
    if key not in _clients:
        base = _client if _client is not None else _clients.get(None) or Client.from_env()
        _clients[None] = base
        _clients[key] = base.with_repo(owner, repo) if key is not None else base
    return _clients[key]


def _pure() -> Client:
    # The seed's pure functions need no forge: a half-configured one must not fail them.
    if "pure" not in _clients:
        _clients["pure"] = _for(None, None).pure()
    return _clients["pure"]


def __getattr__(name: str) -> Any:
    # PHASE_RESUME_MAP is read on first use, so importing the module runs nothing.
    if name == "PHASE_RESUME_MAP":
        global _phase_map
        if _phase_map is None:
            table = _for(None, None).resume_map()
            _phase_map = types.MappingProxyType(dict(table.phases))
        return _phase_map
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def find_session_state_issue(owner: str, repo: str) -> Union[int, str]:
    """The session state issue's number, found, or created when there is none (as forgestate's
    ``checkpoint`` would). On the local store, the thread file's path."""
    thread = _for(owner, repo).init().thread
    number = re.search(r"/issues/(\d+)$", thread)
    return int(number.group(1)) if number else thread


def create_checkpoint(
    agent_name: str, session_id: str, phase: str, data: Mapping[str, Any]
) -> Dict[str, Any]:
    """A checkpoint dict: ``version``, ``timestamp``, ``agent``, ``session``, ``phase``,
    ``data``. The names are checked as forgestate checks them (a refused one raises
    :class:`~forgestate.DataError`) and the timestamp is forgestate's. Pure, as in the seed:
    no forge settings are read (see :meth:`Client.pure`)."""
    rendered = _pure().render(agent_name, session_id, phase=phase, data=dict(data))
    return {**_seed_dict(rendered.record), "data": data}


def format_checkpoint_comment(checkpoint: Mapping[str, Any]) -> str:
    """The comment body for a checkpoint dict, as forgestate writes it (version 2.0, with an
    ``Id:`` line, secrets redacted). The seed's parser reads it. Needs no forge settings."""
    return _pure().render(
        checkpoint["agent"], checkpoint["session"], phase=checkpoint["phase"],
        data=checkpoint.get("data", {}), time=checkpoint.get("timestamp") or None,
        id=checkpoint.get("id") or None,
    ).body


def save_checkpoint(
    owner: str, repo: str, session_issue: Any, checkpoint: Mapping[str, Any], *, intent:
    Optional[str] = None, intent_data: Any = None
) -> None:
    """Saves a checkpoint dict. Never raises: a failure prints a warning, as the seed's did,
    and a record the forge cannot take now waits in the outbox and is posted later.
    ``session_issue`` is not needed (forgestate finds and caches the session issue).

    ``intent`` (forgestate only, keyword): a side effect about to happen (``"create_pr"``),
    with ``intent_data``; :func:`resume_agent_work` prints it as pending until a later
    checkpoint of the session. Seed readers see a normal checkpoint."""
    try:
        saved = _for(owner, repo).checkpoint(
            checkpoint["agent"],
            checkpoint["session"],
            checkpoint["phase"],
            checkpoint.get("data") or {},
            intent=intent,
            intent_data=intent_data,
        )
    except (ForgestateError, KeyError, TypeError, ValueError, OSError) as e:
        # Checkpoint failure shouldn't crash the agent.
        print(f"[WARNING] Failed to save checkpoint: {e}")
        return
    if saved.posted:
        print(f"[CHECKPOINT] Saved: {checkpoint['phase']}")
    else:
        print(
            f"[CHECKPOINT] Spooled to the outbox: {checkpoint['phase']} ({saved.cause}); "
            "the next forgestate command posts it"
        )


def save_state(
    owner: str, repo: str, agent_name: str, session_id: str, phase: str, **kwargs: Any
) -> None:
    """Creates and saves a checkpoint in one call; the keyword arguments are the state data.
    Never raises (see :func:`save_checkpoint`)."""
    checkpoint = {"agent": agent_name, "session": session_id, "phase": phase, "data": kwargs}
    save_checkpoint(owner, repo, None, checkpoint)


def _seed_dict(record: Any) -> Dict[str, Any]:
    return {"data": record.data, "version": record.version, "phase": record.phase,
            "session": record.session, "timestamp": record.time, "agent": record.agent}


def parse_checkpoint_comment(comment_body: str) -> Optional[Dict[str, Any]]:
    """The checkpoint dict in a comment body (``data``, ``version``, ``phase``, ``session``,
    ``timestamp``, ``agent``), or ``None`` when the body is not a checkpoint."""
    try:
        record = _pure().parse(comment_body)
    except DataError:
        return None
    if record.kind != "checkpoint":
        return None
    return _seed_dict(record)


def load_latest_checkpoint(
    owner: str, repo: str, agent_name: Optional[str] = None, session_id: Optional[str] = None
) -> Optional[Dict[str, Any]]:
    """The newest checkpoint (thread order, no time window), optionally of one agent and one
    session, as a checkpoint dict; ``None`` when there is none."""
    record = _for(owner, repo).latest(agent_name, session_id, "checkpoint").record
    return _seed_dict(record) if record is not None else None


def _resume(owner: str, repo: str, agent_name: Optional[str], session_id: Optional[str]):
    client, agent = _for(owner, repo), agent_name or _IMPLEMENTATION_WORKER
    if not (agent_name and session_id):  # the seed's None (or "") matches any: take the newest
        newest = client.latest(agent_name or None, session_id or None, "checkpoint").record
        if newest is None:
            print("[RESUME] No checkpoint found, starting fresh")
            default = client.resume_map(agent).default
            return types.SimpleNamespace(checkpoint=None, resume_point=default)
        agent_name, session_id = newest.agent, newest.session
    answer = client.resume(agent_name, session_id)
    if answer.checkpoint is None:
        print("[RESUME] No checkpoint found, starting fresh")
    else:
        print(f"[RESUME] Found checkpoint at phase: {answer.phase}")
        print(f"[RESUME] Checkpoint time: {answer.checkpoint.time}")
    if answer.ended is not None:
        print(f"[RESUME] Session ended: {answer.ended.reason}")
    if answer.pending_intent is not None:
        print(
            f"[RESUME] Pending intent: {answer.pending_intent.name} "
            "(check whether it happened before doing it again)"
        )
    for warning in answer.warnings:
        if "two writers" in warning:
            print(f"[WARNING] {warning}")
    return answer


def resume_agent_work(
    owner: str, repo: str, agent_name: Optional[str], session_id: Optional[str]
) -> Tuple[Optional[Dict[str, Any]], str]:
    """``(data, phase)`` of the agent's last checkpoint in the session, or
    ``(None, "fresh_start")``. As in the seed, a ``None`` agent or session matches any."""
    answer = _resume(owner, repo, agent_name, session_id)
    if answer.checkpoint is None:
        return None, "fresh_start"
    return answer.data, answer.phase


def resume_implementation(
    owner: str, repo: str, session_id: Optional[str], working_dir: Optional[str]
) -> Tuple[str, Dict[str, Any]]:
    """``(resume_point, state)`` for an implementation worker: the resume map's answer (globs
    included: every ``subtask_N_complete`` resumes at ``phase_2_continue``) and the state to
    restore. A fresh start is the map's default (``start``) and ``{}``."""
    answer = _resume(owner, repo, _IMPLEMENTATION_WORKER, session_id)
    if answer.checkpoint is None:
        return answer.resume_point, {}
    data = answer.data if isinstance(answer.data, dict) else {}
    state = {
        "issue_number": data.get("issue_number"),
        "branch_name": data.get("branch_name"),
        "completed_subtasks": data.get("completed_subtasks", []),
        "pr_number": data.get("pr_number"),
        "working_dir": working_dir or data.get("working_dir"),
    }
    return answer.resume_point, state


def post_health_signal(
    owner: str, repo: str, agent_name: str, session_id: str, metrics: Mapping[str, Any]
) -> None:
    """Posts a ``[HEALTH]`` signal (status ``Active``, next check ``in 10 iterations``). A
    signal the forge cannot take now waits in the outbox."""
    _for(owner, repo).health(agent_name, session_id, metrics, next_check="in 10 iterations")


def end_session(
    owner: str, repo: str, agent_name: str, session_id: str, reason: str, note: Optional[str] =
    None
) -> None:
    """Ends a session (forgestate only): ``reason`` is ``completed``, ``interrupted``,
    ``error`` or ``user_stop``. Supervisors then see it completed or ended, never stalled.
    Never raises, like :func:`save_checkpoint`: a failure prints a warning."""
    try:
        saved = _for(owner, repo).end(agent_name, session_id, reason, note=note)
    except ForgestateError as e:
        print(f"[WARNING] Failed to end the session: {e}")
        return
    print(f"[END] Session {session_id} ended: {reason}")
