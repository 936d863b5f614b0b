"""What `pip install .` gives: the `forgestate` command beside the interpreter, and the module
that finds and runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import forgestate
from forgestate import _run


def test_forgestate_version_runs_from_the_venv():
    binary = Path(sysconfig.get_path("scripts")) / _run.EXE
    assert binary.is_file(), f"the wheel did not install {binary}"
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"forgestate {forgestate.__version__}"
    if "FORGESTATE_BIN" not in os.environ:
        assert _run.find_binary() == str(binary)


def test_python_c_round_trips_a_checkpoint_on_the_local_store(local_store):
    save = (
        "from forgestate.session_state import save_state, resume_implementation\n"
        "save_state('acme', 'app', 'implementation-worker', 's1', 'subtask_2_complete',"
        " issue_number=7, branch_name='feat/7', completed_subtasks=[1, 2])\n"
    )
    out = subprocess.run([sys.executable, "-c", save], capture_output=True, text=True, check=True)
    assert "[CHECKPOINT] Saved: subtask_2_complete" in out.stdout
    assert (local_store / "thread.jsonl").is_file()

    resume = (
        "from forgestate.session_state import save_state, resume_implementation\n"
        "print(repr(resume_implementation('acme', 'app', 's1', '/w')))\n"
    )
    out = subprocess.run([sys.executable, "-c", resume], capture_output=True, text=True,
                         check=True)
    answer = eval(out.stdout.strip().splitlines()[-1])
    assert answer == ("phase_2_continue", {
        "issue_number": 7, "branch_name": "feat/7", "completed_subtasks": [1, 2],
        "pr_number": None, "working_dir": "/w"})


def test_a_missing_binary_is_a_config_error(monkeypatch, tmp_path):
    monkeypatch.setenv("FORGESTATE_BIN", str(tmp_path / "nowhere" / "forgestate"))
    try:
        forgestate.Client.local(tmp_path).latest()
    except forgestate.BinaryNotFound as e:
        assert isinstance(e, forgestate.ConfigError)
        assert "FORGESTATE_BIN" in str(e)
    else:
        raise AssertionError("a missing binary must raise BinaryNotFound")
