"""The typed API: `forgestate.Client`, its dataclasses, and the exceptions mapped from the exit
categories (65 DataError, 74 StorageError, 75 Offline, 78 ConfigError)."""

from __future__ import annotations

import pytest

import forgestate
from forgestate import (
    Client,
    ConfigError,
    DataError,
    ForgestateError,
    CheckpointAnswer,
    Entry,
    Offline,
    ResumeAnswer,
    StorageError,
    UsageError,
)

W = "implementation-worker"


def test_checkpoint_resume_latest_list_on_a_local_store(tmp_path):
    c = Client.local(tmp_path / "store")
    saved = c.checkpoint(W, "s1", "clone_complete", {"issue_number": 42, "api_key": "k"})
    assert isinstance(saved, CheckpointAnswer) and saved.posted
    assert saved.comment_id == 1 and saved.id == saved.record.id
    # Redaction is the core's: the secret never reached the store.
    assert saved.record.data == {"issue_number": 42, "api_key": "[REDACTED]"}
    assert saved.record.redacted == 1
    c.health("orch", "s1", {"workers": 2}, next_check="soon")
    c.checkpoint(W, "s1", "subtask_7_complete", {"issue_number": 42})

    r = c.resume(W, "s1")
    assert isinstance(r, ResumeAnswer)
    assert (r.resume_point, r.phase, r.data) == ("phase_2_continue", "subtask_7_complete",
                                                 {"issue_number": 42})
    assert not r.fresh_start and not r.offline and not r.pending and not r.unmapped
    assert isinstance(r.checkpoint, Entry) and r.checkpoint.comment.id == 3

    unmapped = c.checkpoint(W, "s2", "invented_phase")
    assert unmapped.record.data == {}
    assert c.resume(W, "s2").unmapped is True

    fresh = c.resume(W, "nope")
    assert fresh.fresh_start and fresh.phase == "fresh_start" and fresh.data == {}

    assert c.latest(kind="health").record.metrics == {"workers": 2}
    assert c.latest(agent="implementation-*").record.phase == "invented_phase"
    assert c.latest(agent="nobody").record is None
    phases = [x.phase or x.status for x in c.list(session="s1").records]
    assert phases == ["clone_complete", "Active", "subtask_7_complete"]
    assert [x.phase for x in c.list(agent=W, limit=1).records] == ["invented_phase"]


def test_render_and_parse_come_from_the_core(tmp_path):
    c = Client.local(tmp_path)
    rendered = c.render(W, "s", phase="p", data={"b": 1, "a": 2}, time="2026-01-02T03:04:05Z")
    assert "Time: 2026-01-02T03:04:05.000000Z" in rendered.body
    assert '{\n  "a": 2,\n  "b": 1\n}' in rendered.body  # sorted keys, two-space indent
    back = c.parse(rendered.body)
    assert (back.id, back.phase, back.data) == (rendered.record.id, "p", {"a": 2, "b": 1})
    with pytest.raises(DataError) as e:
        c.parse("just a comment")
    assert e.value.code == 65 and e.value.reason == "no_marker"


@pytest.mark.parametrize(
    "data",
    [[1, 2], "text", '"a JSON string"'],
)
def test_bad_data_raises_data_error(tmp_path, data):
    c = Client.local(tmp_path)
    with pytest.raises(DataError) as e:
        c.checkpoint(W, "s", "p", data)  # type: ignore[arg-type]
    assert e.value.code == 65 and e.value.category == "data"
    assert "JSON object" in e.value.message
    assert c.latest().record is None


def test_a_refused_name_raises_data_error_and_writes_nothing(tmp_path):
    c = Client.local(tmp_path)
    with pytest.raises(DataError, match="session"):
        c.checkpoint(W, "s1\nPhase: evil", "p")
    with pytest.raises(DataError):
        c.checkpoint(W, "s1", "p", {"n": float("nan")})
    assert c.list().records == []


@pytest.mark.parametrize(
    "data, keys",
    [({1: "int", "1": "str"}, "1"), ({True: "bool", "true": "str"}, "true"),
     ({"outer": {None: 1, "null": 2}}, "null"), ({"list": [{1.5: "a", "1.5": "b"}]}, "1.5")],
)
def test_two_keys_that_are_one_json_key_are_a_data_error_about_the_data(tmp_path, data, keys):
    """JSON keys are strings: Python's ``1`` and ``"1"`` would be one key, and one value lost.
    It is the data's problem (DataError), named as such, not a request line's."""
    c = Client.local(tmp_path)
    with pytest.raises(DataError) as e:
        c.checkpoint(W, "s", "p", data)
    assert e.value.code == 65 and "request line" not in e.value.message, e.value.message
    assert "data" in e.value.message and f'"{keys}"' in e.value.message, e.value.message
    assert c.list().records == []


def test_bad_config_raises_config_error(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[forge]\nno_such_key = 1\n")
    with pytest.raises(ConfigError) as e:
        Client(tmp_path / "store", config=config).latest()
    assert e.value.code == 78 and "no_such_key" in e.value.message
    # A forge URL carrying a password is refused, and never echoed.
    with pytest.raises(ConfigError) as e:
        Client(url="https://bot:hunter2@forge.example.com", owner="a", repo="b",
               token="t0ken").latest()
    assert "hunter2" not in e.value.message


def test_a_forge_without_a_session_issue_is_a_config_error(fake_forge):
    c = Client(repo=f"{fake_forge.owner}/{fake_forge.repo}")
    with pytest.raises(ConfigError, match="forgestate init"):
        c.resume(W, "s1")
    assert c.init().created is True
    assert c.resume(W, "s1").fresh_start


def test_an_unreachable_forge_raises_offline_when_nothing_is_known(fake_forge):
    c = Client(repo=f"{fake_forge.owner}/{fake_forge.repo}")
    c.init()
    fake_forge.down()
    with pytest.raises(Offline) as e:
        c.resume(W, "s1")
    assert e.value.code == 75 and isinstance(e.value, ForgestateError)
    # A checkpoint is spooled, not lost; --strict makes that an Offline error.
    saved = c.checkpoint(W, "s1", "clone_complete", {"n": 1})
    assert not saved.posted and saved.spooled and saved.comment_id is None
    strict = Client(repo=f"{fake_forge.owner}/{fake_forge.repo}", strict=True)
    with pytest.raises(Offline):
        strict.checkpoint(W, "s1", "subtask_1_complete", {"n": 2})
    # What this machine knows answers while the forge is down, marked offline and pending.
    r = c.resume(W, "s1")
    assert r.offline and r.pending and r.phase == "subtask_1_complete"


def test_the_token_is_handed_over_in_the_environment_and_never_shown(fake_forge, monkeypatch,
                                                                    tmp_path):
    monkeypatch.delenv("FORGESTATE_TOKEN")
    c = Client(url=fake_forge.url, repo=f"{fake_forge.owner}/{fake_forge.repo}",
               token=fake_forge.token)
    assert fake_forge.token not in repr(c)
    saved = c.checkpoint(W, "s1", "clone_complete", {"note": f"leak {fake_forge.token}"})
    assert saved.posted
    assert fake_forge.token not in str(saved.record.data)
    # An untrusted account, on a machine of its own, writes too, but its records never count
    # for resume. (Its own machine: one account's outbox is posted by whichever token that
    # account uses next, so a rotated token still posts what waits.)
    with monkeypatch.context() as elsewhere:
        for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME"):
            elsewhere.setenv(var, str(tmp_path / "mallory" / var))
        mallory = Client(url=fake_forge.url, repo=f"{fake_forge.owner}/{fake_forge.repo}",
                         token=fake_forge.untrusted_token)
        mallory.checkpoint(W, "s1", "pr_created", {"evil": True})
        mallory.close()
    assert c.resume(W, "s1").phase == "clone_complete"


def test_usage_and_storage_errors(tmp_path):
    c = Client.local(tmp_path / "s")
    with pytest.raises(UsageError):
        c.list(since="yesterday-ish")
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(StorageError) as e:
        Client.local(not_a_dir).checkpoint(W, "s", "p")
    assert e.value.code == 74


def test_the_package_exports_its_api():
    for name in ("Client", "ConfigError", "DataError", "Offline", "ForgestateError"):
        assert name in forgestate.__all__
    assert issubclass(ConfigError, ForgestateError) and issubclass(Offline, ForgestateError)
    assert forgestate.__version__ != "0+unknown"


def test_list_carries_the_whole_list_answer_and_latest_its_warnings(tmp_path):
    c = Client.local(tmp_path / "store")
    c.checkpoint(W, "s1", "clone_complete", {"a": 1})
    (tmp_path / "store" / "thread.jsonl").open("a").write('{"id": 99, "body": "not a record"\n')
    listing = c.list(invalid=True)
    assert [r.phase for r in listing.records] == ["clone_complete"]
    assert [r.id for r in listing.records] == [r.id for r in c.list().records]
    assert listing.offline is False and isinstance(listing.invalid, list)
    latest = c.latest(agent=W)
    assert latest.record is not None and latest.record.phase == "clone_complete"
    assert latest.complete is True and c.latest(agent="nobody").record is None
