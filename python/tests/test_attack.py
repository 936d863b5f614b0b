"""Holes found by attacking the Python package as a careless caller: text that cannot reach the
command at all (a lone surrogate, a NUL) raised raw `UnicodeEncodeError`/`ValueError` where the
seed's `parse_checkpoint_comment` returns None and the typed API promises `ForgestateError`s."""

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
