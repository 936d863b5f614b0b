"""`forgestate.session_state`, the drop-in for the seed's functions, on the local store and on
the fake forge: same names, arguments and return shapes, forgestate's behaviour underneath."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from forgestate import Client, session_state
from forgestate.session_state import (
    create_checkpoint,
    find_session_state_issue,
    format_checkpoint_comment,
    load_latest_checkpoint,
    parse_checkpoint_comment,
    post_health_signal,
    resume_agent_work,
    resume_implementation,
    save_checkpoint,
    save_state,
)

from conftest import shared_file

W = "implementation-worker"


def seed_function(name: str) -> str:
    """The text of the seed's `def name(` up to its next top-level line, extracted at test
    time from the seed document (never copied into the repository), as tests/it/interop/seed_parser.rs
    does."""
    doc = shared_file("seeds/003_6e1e09118f29b57e.txt").read_text()
    lines = doc.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"def {name}("))
    body = [lines[start]]
    for line in lines[start + 1 :]:
        if line.strip() and not line[0].isspace():
            break
        body.append(line)
    return "\n".join(body)


def seed_parse(body: str):
    """Runs the seed's own `parse_checkpoint_comment` on `body`, in a separate interpreter."""
    script = "import json, sys\n" + seed_function("parse_checkpoint_comment") + (
        "\nprint(json.dumps(parse_checkpoint_comment(sys.stdin.read())))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], input=body, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_save_state_then_resume_implementation_round_trips(backend, capsys):
    owner, repo = backend
    save_state(owner, repo, W, "s1", "clone_complete",
               issue_number=42, branch_name="feat/issue-42", working_dir="/w/42")
    save_state(owner, repo, W, "s1", "subtask_3_complete",
               issue_number=42, branch_name="feat/issue-42", completed_subtasks=[1, 2, 3],
               working_dir="/w/42")
    assert "[CHECKPOINT] Saved: subtask_3_complete" in capsys.readouterr().out

    point, state = resume_implementation(owner, repo, "s1", None)
    # The seed's literal map sent subtask 3 back to "start"; the glob sends it on.
    assert point == "phase_2_continue"
    assert state == {
        "issue_number": 42,
        "branch_name": "feat/issue-42",
        "completed_subtasks": [1, 2, 3],
        "pr_number": None,
        "working_dir": "/w/42",
    }
    # A working_dir given now wins over the saved one, as in the seed.
    assert resume_implementation(owner, repo, "s1", "/elsewhere")[1]["working_dir"] == "/elsewhere"


def test_a_fresh_start_has_the_seeds_shapes(backend, capsys):
    owner, repo = backend
    # On a forge, reads need the session issue (they never answer "fresh start" for a thread
    # they could not find): the product-builder creates it, as in the seed.
    find_session_state_issue(owner, repo)
    assert resume_agent_work(owner, repo, W, "never") == (None, "fresh_start")
    assert "[RESUME] No checkpoint found, starting fresh" in capsys.readouterr().out
    assert resume_implementation(owner, repo, "never", "/w") == ("start", {})
    assert load_latest_checkpoint(owner, repo, W, "never") is None


def test_load_latest_checkpoint_filters_and_returns_the_seed_dict(backend):
    owner, repo = backend
    save_state(owner, repo, W, "s1", "clone_complete", n=1)
    save_state(owner, repo, "pr-self-reviewer", "s1", "review_posted", pr_number=7)
    save_state(owner, repo, W, "s2", "pr_created", pr_number=8)

    latest = load_latest_checkpoint(owner, repo)
    assert latest["phase"] == "pr_created"
    mine = load_latest_checkpoint(owner, repo, agent_name=W, session_id="s1")
    assert set(mine) == {"data", "version", "phase", "session", "timestamp", "agent"}
    assert (mine["agent"], mine["session"], mine["phase"], mine["data"]) == (
        W, "s1", "clone_complete", {"n": 1})
    assert mine["version"] == "2.0"
    assert load_latest_checkpoint(owner, repo, agent_name="pr-self-reviewer")["data"] == {
        "pr_number": 7}

    data, phase = resume_agent_work(owner, repo, W, "s2")
    assert (data, phase) == ({"pr_number": 8}, "pr_created")


def test_a_missing_agent_or_session_matches_any_as_in_the_seed(backend, capsys):
    owner, repo = backend
    find_session_state_issue(owner, repo)
    # Nothing saved yet: a fresh start, in the seed's shapes, with no session named.
    assert resume_agent_work(owner, repo, W, None) == (None, "fresh_start")
    assert resume_implementation(owner, repo, None, "/w") == ("start", {})
    save_state(owner, repo, W, "s1", "clone_complete", n=1)
    save_state(owner, repo, "pr-self-reviewer", "s2", "review_posted", pr_number=7)
    save_state(owner, repo, W, "s3", "pr_created", pr_number=8)
    capsys.readouterr()
    # The seed's load_latest_checkpoint(…, agent, None) takes the agent's newest in any session.
    assert resume_agent_work(owner, repo, W, None) == ({"pr_number": 8}, "pr_created")
    assert "[RESUME] Found checkpoint at phase: pr_created" in capsys.readouterr().out
    assert resume_agent_work(owner, repo, None, "s2") == ({"pr_number": 7}, "review_posted")
    assert resume_agent_work(owner, repo, "", "") == ({"pr_number": 8}, "pr_created")
    assert resume_agent_work(owner, repo, None, None) == ({"pr_number": 8}, "pr_created")
    assert resume_implementation(owner, repo, None, None)[0] == "phase_4_monitoring"


def test_the_seeds_parser_and_the_packages_agree_on_forgestates_output():
    checkpoint = create_checkpoint(W, "sess-42", "subtask_2_complete",
                                   {"issue_number": 42, "completed_subtasks": [1, 2],
                                    "big": 18446744073709551616, "text": "line\nbreak ```"})
    assert set(checkpoint) == {"version", "timestamp", "agent", "session", "phase", "data"}
    body = format_checkpoint_comment(checkpoint)
    assert body.startswith(f"[CHECKPOINT] {W}\nVersion: 2.0\n")
    # The same dict renders the same body (its time is kept).
    assert format_checkpoint_comment(checkpoint) .split("\nId:")[0] == body.split("\nId:")[0]

    ours = parse_checkpoint_comment(body)
    theirs = seed_parse(body)
    assert ours == theirs
    assert ours["data"] == checkpoint["data"]
    assert ours["timestamp"] == checkpoint["timestamp"]


def test_parse_checkpoint_comment_reads_what_the_seed_wrote_and_refuses_non_records():
    seed_body = (
        "[CHECKPOINT] implementation-worker\nVersion: 1.0\nPhase: clone_complete\n"
        "Session: s9\nTime: 2026-01-02T03:04:05.123456Z\n\nState Data:\n```json\n"
        '{\n  "issue_number": 42\n}\n\n---\n\nAutomated by CleverAgents Bot Agent: '
        "implementation-worker"
    )
    # The seed's template never closed its fence, so its own parser cannot read this body;
    # forgestate's can.
    assert seed_parse(seed_body) is None
    assert parse_checkpoint_comment(seed_body) == {
        "data": {"issue_number": 42}, "version": "1.0", "phase": "clone_complete",
        "session": "s9", "timestamp": "2026-01-02T03:04:05.123456Z",
        "agent": "implementation-worker"}
    assert parse_checkpoint_comment("LGTM, ship it") is None
    health = Client.from_env().render("o", "s", kind="health", metrics={"a": 1}).body
    assert parse_checkpoint_comment(health) is None


def test_phase_resume_map_is_a_read_only_view_of_the_effective_map(tmp_path, monkeypatch):
    seen = session_state.PHASE_RESUME_MAP
    assert isinstance(seen, types.MappingProxyType)
    assert seen["clone_complete"] == "phase_2_subtasks"
    assert seen["subtask_*_complete"] == "phase_2_continue"
    with pytest.raises(TypeError):
        seen["clone_complete"] = "elsewhere"  # type: ignore[index]

    # The effective map: a config file's table replaces the built-in one.
    config = tmp_path / "custom.toml"
    config.write_text('[resume.agents."implementation-worker"]\nclone_complete = "phase_9"\n')
    session_state.configure(Client(config=config))
    assert dict(session_state.PHASE_RESUME_MAP) == {"clone_complete": "phase_9"}


def test_save_state_never_raises(backend, capsys):
    owner, repo = backend
    find_session_state_issue(owner, repo)
    # Header injection is refused by the core; the agent carries on with a warning.
    assert save_state(owner, repo, W, "s1", "x\nPhase: evil", n=1) is None
    assert "[WARNING] Failed to save checkpoint:" in capsys.readouterr().out
    # Data that is not JSON is refused the same way.
    assert save_state(owner, repo, W, "s1", "clone_complete", when=object()) is None
    assert "[WARNING] Failed to save checkpoint:" in capsys.readouterr().out
    assert load_latest_checkpoint(owner, repo) is None
    # save_checkpoint with a dict missing its keys, too.
    assert save_checkpoint(owner, repo, 1, {"agent": W}) is None
    assert "[WARNING]" in capsys.readouterr().out


def test_a_failed_post_is_spooled_and_posted_later(fake_forge, capsys):
    owner, repo = fake_forge.owner, fake_forge.repo
    save_state(owner, repo, W, "s1", "clone_complete", n=1)
    before = fake_forge.comments()
    fake_forge.down()
    save_state(owner, repo, W, "s1", "subtask_1_complete", n=2)
    assert "[CHECKPOINT] Spooled to the outbox: subtask_1_complete" in capsys.readouterr().out
    assert fake_forge.comments() == before
    fake_forge.up()
    # Reads see the waiting record (pending, from this machine's outbox) ...
    assert load_latest_checkpoint(owner, repo, W, "s1")["data"] == {"n": 2}
    # ... and it is posted once, by a later command's drain or by flush.
    Client.from_env().with_repo(owner, repo).flush()
    assert fake_forge.comments() == before + 1
    latest = Client.from_env().with_repo(owner, repo).latest(W, "s1").record
    assert latest.data == {"n": 2} and latest.comment.pending is False


def test_find_session_state_issue_and_health(fake_forge):
    owner, repo = fake_forge.owner, fake_forge.repo
    number = find_session_state_issue(owner, repo)
    assert isinstance(number, int) and number >= 1
    assert find_session_state_issue(owner, repo) == number
    assert post_health_signal(owner, repo, "implementation-orchestrator", "s1",
                              {"active_workers": 3}) is None
    health = Client.from_env().with_repo(owner, repo).latest(kind="health").record
    assert health is not None
    assert (health.agent, health.status, health.metrics, health.next_check) == (
        "implementation-orchestrator", "Active", {"active_workers": 3}, "in 10 iterations")
    assert health.comment is not None and health.comment.author == fake_forge.login
