"""The seed's "Complete Implementation with Checkpoints" example, ported to the drop-in,
killed with SIGKILL partway and started again: it resumes where its last checkpoint says,
on the local store and on the fake forge."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from forgestate.session_state import (
    find_session_state_issue,
    load_latest_checkpoint,
    resume_implementation,
)

WORKER = Path(__file__).parent / "scripts" / "implementation_worker.py"


def start(owner, repo, session, stdin):
    return subprocess.Popen(
        [sys.executable, str(WORKER), owner, repo, session],
        stdin=stdin,
        stdout=subprocess.PIPE,
        text=True,
    )


def read_until(proc, wanted):
    """The worker's lines up to and including `wanted`."""
    lines = []
    while True:
        line = proc.stdout.readline()
        assert line, f"the worker ended before {wanted!r}; it printed {lines}"
        lines.append(line.rstrip("\n"))
        if lines[-1] == wanted:
            return lines


def test_a_killed_worker_resumes_from_its_last_checkpoint(backend):
    owner, repo = backend
    # The session issue exists before workers start (the product-builder makes it).
    find_session_state_issue(owner, repo)
    first = start(owner, repo, "sess-kill", subprocess.PIPE)
    try:
        for gate in (0, 1):
            read_until(first, f"[GATE] {gate}")
            first.stdin.write("\n")
            first.stdin.flush()
        # Subtask 2 is done but not checkpointed when the worker dies.
        lines = read_until(first, "[GATE] 2")
        assert "[CHECKPOINT] Saved: subtask_1_complete" in lines
        os.kill(first.pid, signal.SIGKILL)
    finally:
        if first.poll() is None and first.returncode is None:
            # A failed assertion above must not leave the worker waiting at its gate.
            try:
                first.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                first.kill()
        first.wait()
    assert first.returncode == -signal.SIGKILL

    saved = load_latest_checkpoint(owner, repo, "implementation-worker", "sess-kill")
    assert saved["phase"] == "subtask_1_complete"
    assert saved["data"]["completed_subtasks"] == [0, 1]

    second = start(owner, repo, "sess-kill", subprocess.DEVNULL)
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out
    lines = out.splitlines()
    assert "[RESUME] Found checkpoint at phase: subtask_1_complete" in lines
    assert "[DO] clone" not in lines and "[DO] branch" not in lines
    assert "[SKIP] Subtask 0 already completed" in lines
    assert "[SKIP] Subtask 1 already completed" in lines
    done = [l for l in lines if l.startswith("[DO] subtask")]
    assert done == ["[DO] subtask 2 api", "[DO] subtask 3 docs"]
    assert lines[-1] == "[DONE]"

    point, state = resume_implementation(owner, repo, "sess-kill", None)
    assert point == "phase_2_continue"
    assert state["completed_subtasks"] == [0, 1, 2, 3]
    assert state["working_dir"] == "/work/issue-42"
    assert state["branch_name"] == "feat/issue-42"
