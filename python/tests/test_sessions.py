"""Sessions through the Python face, on both backends: ``end`` with each reason (and a bad one),
an intent across a process killed between the intent and its confirmation, compare-and-set
refused (:class:`Conflict`, nothing posted) and accepted, two writers from one parent, and the
drop-in's optional ``intent`` keyword, which seed readers see as a normal checkpoint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_a_client_that_lost_its_session_gets_fenced(backend):
    """Issue #43: two clients are two writers. A supervisor takes the session over for the
    next worker; the old client's plain save still posts but nobody resumes from it, its next
    read raises :class:`forgestate.Fenced` (a :class:`Conflict`) naming the takeover, and with
    ``check_owner`` its save posts nothing."""
    from forgestate import Fenced

    old, supervisor, fresh = client_for(backend), client_for(backend), client_for(backend)
    try:
        first = old.checkpoint(W, "own", "clone_complete", {"n": 1})
        taken = supervisor.resume(W, "own", take_over=True, writer="w-next")
        assert taken.owner.owner == "w-next" and taken.owner.from_record == first.id
        assert taken.takeover_id
        stale = old.checkpoint(W, "own", "subtask_1_complete", {"n": 99})
        assert stale.posted
        new = fresh.checkpoint(W, "own", "subtask_1_complete", {"n": 2}, writer="w-next")
        assert new.record.writer == "w-next"
        resumed = client_for(backend).resume(W, "own")
        assert resumed.data == {"n": 2} and resumed.fenced == 1
        # A warm reader (the supervisor read the session for its takeover) agrees.
        warm = supervisor.resume(W, "own")
        assert warm.data == {"n": 2} and warm.record_id == new.id and warm.fenced == 1
        for call in (lambda: old.resume(W, "own"), lambda: old.latest(agent=W, session="own")):
            with pytest.raises(Fenced) as e:
                call()
            assert isinstance(e.value, Conflict) and e.value.code == 73
            assert "w-next" in str(e.value) and taken.takeover_id in str(e.value)
        before = len(client_for(backend).list(session="own").records)
        with pytest.raises(Fenced):
            old.checkpoint(W, "own", "x", {"n": 100}, check_owner=True)
        assert len(client_for(backend).list(session="own").records) == before
    finally:
        for c in (old, supervisor, fresh):
            c.close()


def test_check_owner_in_the_config_file_makes_a_fenced_clients_save_post_nothing(backend, tmp_path):
    """Issue #43: ``[session] check_owner = true`` alone (no keyword) makes every save of the
    client read its session first; once another writer took the session over, the save raises
    :class:`forgestate.Fenced` and posts nothing."""
    from forgestate import Fenced

    config = tmp_path / "check-owner.toml"
    config.write_text(Path(os.environ["FORGESTATE_CONFIG"]).read_text()
                      + "\n[session]\ncheck_owner = true\n")
    old = client_for(backend)._copy()
    old.config = config
    supervisor = client_for(backend)
    try:
        first = old.checkpoint(W, "cfg", "clone_complete", {"n": 1})
        taken = supervisor.resume(W, "cfg", take_over=True, writer="w-next")
        before = len(client_for(backend).list(session="cfg").records)
        with pytest.raises(Fenced) as e:
            old.checkpoint(W, "cfg", "subtask_1_complete", {"n": 99})
        assert "w-next" in str(e.value) and taken.takeover_id in str(e.value)
        assert len(client_for(backend).list(session="cfg").records) == before
        resumed = client_for(backend).resume(W, "cfg")
        assert resumed.record_id == first.id and resumed.fenced == 0
    finally:
        for c in (old, supervisor):
            c.close()
