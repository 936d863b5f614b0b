"""Sessions through the Python face, on both backends: ``end`` with each reason (and a bad one),
an intent across a process killed between the intent and its confirmation, compare-and-set
refused (:class:`Conflict`, nothing posted) and accepted, two writers from one parent, and the
drop-in's optional ``intent`` keyword, which seed readers see as a normal checkpoint."""

from __future__ import annotations

import subprocess
import sys

import pytest

from forgestate import Client, Conflict, UsageError
from forgestate import session_state

W = "implementation-worker"
REASONS = ["completed", "interrupted", "error", "user_stop"]


@pytest.fixture(autouse=True)
def initialized(backend):
    """The session thread exists (on the forge, `init` creates the session issue)."""
    Client().with_repo(*backend).init()


def client_for(backend) -> Client:
    owner, repo = backend
    return Client().with_repo(owner, repo)


def test_each_end_reason(backend):
    c = client_for(backend)
    for reason in REASONS:
        session = f"s-{reason}"
        c.checkpoint(W, session, "clone_complete", {"n": 1})
        saved = c.end(W, session, reason, note="why")
        assert saved.record.kind == "end"
        assert saved.record.reason == reason
        resumed = Client().with_repo(*backend).resume(W, session)
        assert resumed.ended is not None and resumed.ended.reason == reason
        assert resumed.ended.note == "why"
        assert resumed.data == {"n": 1}
    rows = {r.session: r for r in c.status(stalled_after_secs=1, warn_after_secs=1).rows}
    for reason in REASONS:
        want = "completed" if reason == "completed" else "ended"
        assert rows[f"s-{reason}"].verdict == want
        assert rows[f"s-{reason}"].ended.reason == reason
    with pytest.raises(UsageError) as bad:
        c.end(W, "s", "finished")
    assert "completed, interrupted, error, user_stop" in str(bad.value)


KILLED = """
import os, signal, sys
from forgestate import Client
c = Client().with_repo(sys.argv[1], sys.argv[2])
c.checkpoint("w", "pr", "implementation_complete", {"branch": "b"},
             intent="create_pr", intent_data={"branch": "b"})
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_an_intent_survives_a_kill_until_a_checkpoint_confirms_it(backend):
    killed = subprocess.run([sys.executable, "-c", KILLED, *backend], check=False)
    assert killed.returncode == -9
    c = client_for(backend)
    resumed = c.resume("w", "pr")
    assert resumed.pending_intent is not None
    assert resumed.pending_intent.name == "create_pr"
    assert resumed.pending_intent.data == {"branch": "b"}
    assert resumed.pending_intent.id == resumed.record_id
    c.checkpoint("w", "pr", "pr_created", {"pr_number": 7}, merge=True)
    after = c.resume("w", "pr")
    assert after.pending_intent is None
    assert after.data == {"branch": "b", "pr_number": 7}


def test_compare_and_set_refused_and_accepted(backend):
    c = client_for(backend)
    first = c.checkpoint(W, "cas", "a")
    second = c.checkpoint(W, "cas", "b", if_latest=first.id)
    assert second.record.parent == first.id
    before = len(c.list(session="cas").records)
    with pytest.raises(Conflict) as refused:
        c.checkpoint(W, "cas", "c", if_latest=first.id)
    assert refused.value.code == 73
    assert second.id in str(refused.value) and second.record.time in str(refused.value)
    assert len(c.list(session="cas").records) == before


def test_two_writers_from_one_parent(backend):
    root = client_for(backend).checkpoint(W, "two", "a")
    one, two = client_for(backend), client_for(backend)
    assert one.resume(W, "two").latest_id == root.id
    assert two.resume(W, "two").latest_id == root.id
    a = one.checkpoint(W, "two", "b1")
    b = two.checkpoint(W, "two", "b2")
    assert a.record.parent == b.record.parent == root.id
    resumed = one.resume(W, "two")
    assert resumed.conflicts and resumed.conflicts[0].parent == root.id
    assert any(a.id in w and b.id in w for w in resumed.warnings)
    history = one.history("two")
    assert history.conflicts[0].agent == W
    assert {r.session: r for r in one.status().rows}["two"].verdict == "conflicted"


def test_the_drop_in_takes_an_intent_keyword_seed_readers_ignore(backend, capsys):
    owner, repo = backend
    session_state.save_checkpoint(
        owner, repo, None,
        {"agent": W, "session": "d", "phase": "implementation_complete", "data": {"k": 1}},
        intent="create_pr", intent_data={"branch": "b"},
    )
    data, phase = session_state.resume_agent_work(owner, repo, W, "d")
    assert (data, phase) == ({"k": 1}, "implementation_complete")
    assert "[RESUME] Pending intent: create_pr" in capsys.readouterr().out
    latest = session_state.load_latest_checkpoint(owner, repo, W, "d")
    assert latest is not None and latest["data"] == {"k": 1}
    session_state.end_session(owner, repo, W, "d", "completed")
    session_state.resume_agent_work(owner, repo, W, "d")
    assert "[RESUME] Session ended: completed" in capsys.readouterr().out
    # The end record is no checkpoint to the seed's reader either.
    assert session_state.load_latest_checkpoint(owner, repo, W, "d")["phase"] == phase
