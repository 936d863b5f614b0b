"""Export, import and publish through the Python face, from the same verb table as the CLI:
an export of either backend resumes as the source did, an import into another repository posts
each record once (a rerun posts nothing new), and publish refuses the local store clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgestate import Client, ConfigError

W = "implementation-worker"


def test_an_export_resumes_as_its_source(backend, tmp_path: Path):
    c = Client().with_repo(*backend)
    c.init()
    c.checkpoint(W, "s1", "clone_complete", {"n": 1})
    c.checkpoint(W, "s1", "subtask_1_complete", {"n": 2})
    answer = c.export(str(tmp_path / "exported"))
    assert answer.written == 2 and answer.records == 2, answer
    exported = Client(store=tmp_path / "exported").resume(W, "s1")
    source = c.resume(W, "s1")
    assert exported.phase == source.phase == "subtask_1_complete"
    assert exported.data == source.data


def test_import_posts_each_record_once(fake_forge, tmp_path: Path):
    src = Client(store=tmp_path / "src")
    src.checkpoint(W, "s1", "clone_complete", {"n": 1})
    src.checkpoint(W, "s1", "subtask_1_complete", {"n": 2})
    target = Client().with_repo(fake_forge.owner, fake_forge.repo)
    target.init()
    importer = getattr(target, "import")
    importer(str(tmp_path / "src"))
    before = len(target.list().records)
    importer(str(tmp_path / "src"))
    assert len(target.list().records) == before
    assert target.resume(W, "s1").phase == "subtask_1_complete"


def test_publish_refuses_the_local_store(local_store):
    with pytest.raises(ConfigError):
        Client().publish()
