"""The one ``forgestate call --lines`` child a :class:`~forgestate.Client` keeps: reused across
verbs, started again when it died or after a fork, ended by ``close()``, a ``with`` block and
garbage collection; and values that look like flags stay values (they are JSON now, not argv)."""

from __future__ import annotations

import copy
import gc
import os
import pickle
import threading

import pytest

from forgestate import Client

W = "implementation-worker"


def test_an_end_note_that_starts_with_a_dash_is_the_note(tmp_path):
    # Before `forgestate call`, this raised UsageError: the note was read as a flag on the
    # command line (issue #28).
    c = Client.local(tmp_path / "store")
    c.checkpoint(W, "s1", "clone_complete")
    ended = c.end(W, "s1", "completed", note="--dry-run failed")
    assert ended.record.note == "--dry-run failed"
    c.close()


def test_values_that_start_with_a_dash_are_values_never_flags(tmp_path):
    c = Client.local(tmp_path / "store")
    saved = c.checkpoint(W, "-s", "--phase", {"k": "-v", "--data": "-"}, next="--dry-run first",
                         blockers=["--force", "-"], intent="--intent", done="-x")
    assert saved.record.phase == "--phase" and saved.record.data == {"k": "-v", "--data": "-"}
    assert (saved.record.next, saved.record.blockers) == ("--dry-run first", ["--force", "-"])
    ended = c.end(W, "-s", "completed", note="--dry-run failed")
    assert ended.record.note == "--dry-run failed"
    health = c.health(W, "-s", {"-": 1}, status="-degraded", next_check="--soon")
    assert (health.record.status, health.record.next_check) == ("-degraded", "--soon")
    resumed = c.resume(W, "-s")
    assert resumed.ended is not None and resumed.ended.note == "--dry-run failed"
    assert c.latest(W, "-s", "end").record.note == "--dry-run failed"


def test_one_child_serves_every_verb_and_is_started_again_when_it_died(tmp_path):
    c = Client.local(tmp_path / "store")
    c.checkpoint(W, "s1", "clone_complete", {"n": 1})
    first = c._child
    assert first is not None and first.alive()
    assert c.resume(W, "s1").phase == "clone_complete"
    c.list()
    assert c._child is first, "the same child answered every verb"
    first.proc.kill()
    first.proc.wait()
    assert c.resume(W, "s1").phase == "clone_complete", "a dead child is replaced"
    assert c._child is not first and c._child.alive()
    c.close()
    assert c._child is None
    assert c.latest(W).record.phase == "clone_complete", "a closed client starts a child again"
    c.close()


def test_close_a_with_block_and_garbage_collection_end_the_child(tmp_path):
    with Client.local(tmp_path / "store") as c:
        c.checkpoint(W, "s1", "clone_complete")
        proc = c._child.proc
    assert proc.wait(timeout=10) == 0, "leaving the block closed stdin; the child exited 0"
    c = Client.local(tmp_path / "store")
    c.resume(W, "s1")
    proc = c._child.proc
    del c
    gc.collect()
    assert proc.wait(timeout=10) == 0, "a collected client's child ends"


def test_threads_share_one_child_one_request_at_a_time(tmp_path):
    c = Client.local(tmp_path / "store")
    errors = []

    def work(n: int) -> None:
        try:
            for i in range(5):
                c.checkpoint(W, f"t{n}", f"step_{i}", {"i": i})
                assert c.resume(W, f"t{n}").phase == f"step_{i}"
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(c.list().records) == 20
    c.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_after_a_fork_the_new_process_starts_its_own_child(tmp_path):
    c = Client.local(tmp_path / "store")
    c.checkpoint(W, "s1", "clone_complete")
    parents = c._child.proc.pid
    pid = os.fork()
    if pid == 0:  # the forked process: never return into pytest
        code = 1
        try:
            ok = c.resume(W, "s1").phase == "clone_complete"
            code = 0 if ok and c._child.proc.pid != parents else 3
            c.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert c._child.proc.pid == parents and c._child.alive(), "the parent's child was left alone"
    assert c.resume(W, "s1").phase == "clone_complete"
    c.close()


def test_a_changed_environment_starts_a_child_that_reads_it(tmp_path, monkeypatch):
    c = Client()
    monkeypatch.setenv("FORGESTATE_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text(f'[local]\ndir = "{tmp_path / "a"}"\n')
    c.checkpoint(W, "s1", "in_a")
    (tmp_path / "other.toml").write_text(f'[local]\ndir = "{tmp_path / "b"}"\n')
    monkeypatch.setenv("FORGESTATE_CONFIG", str(tmp_path / "other.toml"))
    assert c.latest(W).record is None, "the new configuration names another store, as a new process"
    c.close()


def test_a_copied_client_has_a_child_of_its_own(tmp_path):
    c = Client.local(tmp_path / "store")
    c.checkpoint(W, "s1", "clone_complete")
    for other in (copy.copy(c), copy.deepcopy(c), pickle.loads(pickle.dumps(c)),
                  c.with_repo("o", "r"), c.pure()):
        assert other._child is None and other._lock is not c._lock
    again = copy.deepcopy(c)
    assert again.resume(W, "s1").phase == "clone_complete"
    assert again._child is not c._child and c._child.alive()
    again.close()
    c.close()
