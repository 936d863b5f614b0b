"""The handoff fields, `status`, `history` and `fork` through the typed API, on both backends;
Python parameter names in error messages; the seed's pure functions with a half-set forge."""

from __future__ import annotations

import pytest

from forgestate import (
    Change,
    Client,
    ConfigError,
    DataError,
    HistoryAnswer,
    Origin,
    StatusAnswer,
    StatusRow,
    Step,
    UsageError,
)
from forgestate import session_state

W = "implementation-worker"


def client_for(backend) -> Client:
    owner, repo = backend
    return Client().with_repo(owner, repo)


def test_handoff_fields_round_trip_through_checkpoint_resume_latest_and_list(backend, tmp_path):
    c = client_for(backend)
    context = tmp_path / "context.md"
    context.write_text("the plan, version 1\n")
    saved = c.checkpoint(
        W, "h1", "clone_complete", {"issue_number": 7},
        next="split the work into subtasks", blockers=["needs a token", "CI is red"],
        context_file=context,
    )
    assert saved.posted
    assert saved.record.next == "split the work into subtasks"
    assert saved.record.blockers == ["needs a token", "CI is red"]
    assert saved.record.context_hash and saved.record.context_hash.startswith("sha256:")

    r = c.resume(W, "h1")
    assert r.next == "split the work into subtasks"
    assert r.blockers == ["needs a token", "CI is red"]
    assert r.context_drift is None  # not asked
    assert r.checkpoint.next == r.next and r.checkpoint.blockers == r.blockers
    assert c.resume(W, "h1", context_file=context).context_drift is False
    context.write_text("the plan, version 2\n")
    assert c.resume(W, "h1", context_file=context).context_drift is True

    latest = c.latest(W, "h1").record
    assert latest.next == r.next and latest.blockers == r.blockers
    assert latest.context_hash == saved.record.context_hash
    (listed,) = c.list(session="h1").records
    assert listed.blockers == ["needs a token", "CI is red"]

    # No handoff: the fields are empty, not missing.
    c.checkpoint(W, "h2", "clone_complete")
    plain = c.resume(W, "h2")
    assert plain.next is None and plain.blockers == [] and plain.checkpoint.context_hash is None


def test_status_judges_each_agent_and_session(backend):
    c = client_for(backend)
    c.checkpoint(W, "s1", "clone_complete", {"issue_number": 1}, next="subtasks")
    c.health("orchestrator", "s1", {"workers": 2}, status="Paused")
    c.checkpoint(W, "s2", "done_phase")

    status = c.status()
    assert isinstance(status, StatusAnswer)
    assert not status.offline and status.stalled == 0
    by_pair = {(row.agent, row.session): row for row in status.rows}
    assert set(by_pair) == {(W, "s1"), ("orchestrator", "s1"), (W, "s2")}
    worker = by_pair[(W, "s1")]
    assert isinstance(worker, StatusRow)
    assert (worker.verdict, worker.phase, worker.resume_point) == (
        "alive", "clone_complete", "phase_2_subtasks")
    assert worker.next == "subtasks" and worker.records == 1 and worker.last_kind == "checkpoint"
    assert worker.age_secs >= 0 and worker.last_seen
    assert (worker.warn_after_secs, worker.stalled_after_secs) == (600, 1800)
    paused = by_pair[("orchestrator", "s1")]
    assert (paused.verdict, paused.health, paused.metrics) == ("paused", "Paused", {"workers": 2})

    only = c.status(session="s2", warn_after_secs=60, stalled_after_secs=120)
    assert [(r.agent, r.session) for r in only.rows] == [(W, "s2")]
    assert (only.rows[0].warn_after_secs, only.rows[0].stalled_after_secs) == (60, 120)


def test_history_and_fork(backend):
    c = client_for(backend)
    first = c.checkpoint(W, "f1", "clone_complete", {"issue_number": 3, "completed_subtasks": []})
    c.health(W, "f1", {"load": 1})
    second = c.checkpoint(W, "f1", "subtask_1_complete",
                          {"issue_number": 3, "completed_subtasks": [1]}, next="subtask 2")

    h = c.history("f1", diff=True)
    assert isinstance(h, HistoryAnswer) and h.session == "f1" and h.forked_from is None
    assert [s.n for s in h.records] == [1, 2, 3]
    assert all(isinstance(s, Step) for s in h.records)
    assert [s.kind for s in h.records] == ["checkpoint", "health", "checkpoint"]
    assert [s.record_id for s in h.records][::2] == [first.id, second.id]
    assert h.records[0].since_previous_secs is None
    assert h.records[2].resume_point == "phase_2_continue" and h.records[2].next == "subtask 2"
    changes = h.records[2].changes
    assert changes and all(isinstance(x, Change) for x in changes)
    assert any(x.path == "/completed_subtasks/0" and x.new == 1 for x in changes), changes
    assert c.history("f1").records[2].changes is None

    forked = c.fork("f1", "f2")
    assert forked.posted and forked.record.session == "f2"
    assert forked.record.parent == second.id
    assert forked.record.data == {"issue_number": 3, "completed_subtasks": [1]}
    assert c.resume(W, "f2").phase == "subtask_1_complete"
    at_first = c.fork("f1", "f3", at=first.id, agent=W)
    assert at_first.record.parent == first.id and at_first.record.phase == "clone_complete"

    h2 = c.history("f2")
    assert isinstance(h2.forked_from, Origin)
    assert (h2.forked_from.session, h2.forked_from.record_id) == ("f1", second.id)


def test_error_messages_name_python_parameters_not_flags(local_store):
    c = Client()
    with pytest.raises(DataError) as e:
        c.checkpoint(W, "s", "p", [1, 2])  # type: ignore[arg-type]
    assert str(e.value).startswith("data must be a JSON object"), e.value
    assert "--data" not in str(e.value) and e.value.message == str(e.value)
    with pytest.raises(DataError) as e:
        c.health(W, "s", [1])  # type: ignore[arg-type]
    assert str(e.value).startswith("metrics must be a JSON object"), e.value
    with pytest.raises(UsageError) as e:
        c.list(since="not a time")
    assert str(e.value).startswith('since "not a time" is neither'), e.value
    with pytest.raises(DataError) as e:
        c.fork("no-such-session", "new")
    assert "--" not in str(e.value) and "session" in str(e.value)


def test_a_forge_url_without_owner_still_fails_the_verbs_that_need_the_forge(
    monkeypatch, local_store
):
    monkeypatch.setenv("FORGESTATE_URL", "http://127.0.0.1:9")
    with pytest.raises(ConfigError) as e:
        Client().resume(W, "s")
    # ...and the message names the parameter a Python caller passes.
    assert "pass owner," in str(e.value) and "--owner" not in str(e.value)


def test_the_seeds_pure_functions_need_no_forge_settings(monkeypatch, local_store):
    # How an agent on the seed's API configures things: a URL and token in the environment,
    # owner and repo passed on every call (so FORGESTATE_OWNER is not set).
    monkeypatch.setenv("FORGESTATE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("FORGESTATE_TOKEN", "a-token")
    checkpoint = session_state.create_checkpoint(W, "s1", "clone_complete", {"issue_number": 4})
    assert checkpoint["phase"] == "clone_complete" and checkpoint["timestamp"]
    body = session_state.format_checkpoint_comment(checkpoint)
    assert body.startswith("[CHECKPOINT] implementation-worker\n")
    parsed = session_state.parse_checkpoint_comment(body)
    assert parsed["data"] == {"issue_number": 4} and parsed["session"] == "s1"
    assert session_state.parse_checkpoint_comment("not a record") is None
    # Nothing was written anywhere.
    assert not local_store.exists()


def test_pure_drops_every_forge_setting_but_keeps_the_rest(tmp_path):
    c = Client(url="http://127.0.0.1:9", owner="o", repo="r", token="t", config=tmp_path / "x")
    pure = c.pure()
    assert (pure.url, pure.owner, pure.repo, pure._token) == (None, None, None, None)
    assert pure.config == c.config and pure.store and c.store is None
