"""Integers longer than CPython's int-conversion limit (4,300 digits by default) in a record's
data: the CLI keeps them whole, and the package must read them back whole, never answer a fresh
start because its JSON parser refused the answer."""

from __future__ import annotations

import subprocess

import pytest

from forgestate import Client, StorageError
from forgestate._run import find_binary
from forgestate.session_state import resume_agent_work, resume_implementation

W = "implementation-worker"
BIG = "9" * 4999 + "1"  # 5,000 digits, too long for BIG_INT itself
BIG_INT = 10**5000 - 9  # the same number, made without a string conversion


def checkpoint_with_big_numbers(phase: str = "subtask_1_complete") -> None:
    """Saves, through the CLI into the default local store, data holding a 5,000-digit
    integer, its negative, and one nested in a list."""
    data = f'{{"big": {BIG}, "neg": -{BIG}, "list": [1, {BIG}], "issue_number": 42}}'
    subprocess.run(
        [find_binary(), "checkpoint", "--agent", W, "--session", "s1", "--phase", phase,
         "--data", "-"],
        input=data.encode(), check=True, capture_output=True,
    )


def test_client_resume_returns_a_5000_digit_integer_whole(local_store):
    checkpoint_with_big_numbers()
    answer = Client().resume(W, "s1")
    assert not answer.fresh_start
    assert answer.phase == "subtask_1_complete"
    assert answer.resume_point == "phase_2_continue"
    assert answer.data["big"] == BIG_INT
    assert answer.data["neg"] == -BIG_INT
    assert answer.data["list"] == [1, BIG_INT]
    assert answer.data["issue_number"] == 42
    latest = Client().latest(W, "s1").record
    assert latest is not None and latest.data["big"] == BIG_INT


def test_the_drop_in_finds_the_checkpoint(local_store, capsys):
    checkpoint_with_big_numbers()
    data, phase = resume_agent_work("acme", "app", W, "s1")
    assert (phase, data["big"]) == ("subtask_1_complete", BIG_INT)
    point, state = resume_implementation("acme", "app", "s1", None)
    assert (point, state["issue_number"]) == ("phase_2_continue", 42)
    out = capsys.readouterr().out
    assert "No checkpoint found" not in out, out
    assert "[RESUME] Found checkpoint at phase: subtask_1_complete" in out, out


def test_a_resumed_long_integer_is_saved_again_whole(local_store):
    checkpoint_with_big_numbers()
    c = Client()
    resumed = c.resume(W, "s1")
    c.checkpoint(W, "s1", "subtask_2_complete", {**resumed.data, "small": 7, "flag": True})
    again = c.resume(W, "s1")
    assert again.phase == "subtask_2_complete"
    assert again.data == {**resumed.data, "small": 7, "flag": True}
    assert again.data["neg"] == -BIG_INT


def test_an_answer_that_does_not_parse_is_an_error_not_a_fresh_start(tmp_path, local_store):
    fake = tmp_path / "forgestate"
    fake.write_text('#!/bin/sh\necho \'{"resume_point": "start", "fresh_start": tru\'\n')
    fake.chmod(0o755)
    with pytest.raises(StorageError, match="cannot read"):
        Client(binary=fake).resume(W, "s1")
