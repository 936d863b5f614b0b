"""Holes found by attacking the Python package as a careless caller: text that cannot reach the
command at all (a lone surrogate, a NUL) raised raw `UnicodeEncodeError`/`ValueError` where the
seed's `parse_checkpoint_comment` returns None and the typed API promises `ForgestateError`s; a
name or handoff line starting with a dash (`-1`) was refused as an unknown flag."""

from __future__ import annotations

import pytest

from forgestate import Client, DataError
from forgestate.session_state import load_latest_checkpoint, parse_checkpoint_comment

BODY = (
    "[CHECKPOINT] w\nPhase: p\nSession: s\nTime: 2024-01-01T00:00:00Z\n\n"
    '```json\n{"note": "\ud800"}\n```\n'
)


def test_parse_checkpoint_comment_returns_none_for_a_body_that_is_not_unicode(local_store):
    # The seed parses inside `try: ... except Exception: return None`.
    assert parse_checkpoint_comment(BODY) is None


@pytest.mark.parametrize("agent", ["w\ud800", "w\x00"])
def test_unpassable_arguments_are_data_errors(local_store, agent):
    with pytest.raises(DataError):
        Client().latest(agent, "s")
    with pytest.raises(DataError):
        load_latest_checkpoint("acme", "app", agent, "s")


def test_parse_of_an_unencodable_body_is_a_data_error(local_store):
    with pytest.raises(DataError):
        Client().parse(BODY)


@pytest.mark.parametrize("name", ["-1", "--agent", "-"])
def test_a_value_that_starts_with_a_dash_is_a_value_not_a_flag(local_store, name):
    # The library takes any one-line name; the client once passed `--session -1`, which the
    # command refused as an unknown flag.
    c = Client()
    saved = c.checkpoint(name, name, name, {"k": 1}, next="--dry-run first", blockers=["-x"])
    assert saved.posted
    resumed = c.resume(name, name)
    assert resumed.phase == name
    assert resumed.next == "--dry-run first"
    assert resumed.blockers == ["-x"]
    assert [s.agent for s in c.history(name).records] == [name]
