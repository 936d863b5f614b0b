"""docs/python.md's session, run as a doctest: the configurations it shows (the drop-in's
`owner, repo` arguments, `Client.from_env()`) work as printed, on the local store and on a forge
set up by the environment alone, as an agent's would be."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT

#: Times differ from run to run; the rest of the transcript must match.
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


class TimeBlindChecker(doctest.OutputChecker):
    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return super().check_output(TIME.sub("<time>", want), TIME.sub("<time>", got), optionflags)


def transcript() -> str:
    """The ```text block of docs/python.md that holds the `>>>` session."""
    text = (REPO_ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```text\n(.*?)```", text, re.S)
    sessions = [b for b in blocks if b.lstrip().startswith(">>>")]
    assert len(sessions) == 1, "docs/python.md shows one session"
    return sessions[0]


def run(source: str) -> None:
    test = doctest.DocTestParser().get_doctest(source, {}, "docs/python.md", "docs/python.md", 0)
    assert len(test.examples) >= 6, test.examples
    runner = doctest.DocTestRunner(checker=TimeBlindChecker(), optionflags=doctest.ELLIPSIS)
    out: list = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


def test_the_documented_session_runs_on_the_local_store(local_store: Path) -> None:
    run(transcript())
    assert (local_store / "thread.jsonl").is_file()


def test_the_documented_session_runs_on_a_forge_set_by_the_environment(
    fake_forge, monkeypatch: pytest.MonkeyPatch, local_store: Path
) -> None:
    # FORGESTATE_URL and FORGESTATE_TOKEN come from the fixture; the repository as OWNER/NAME.
    monkeypatch.setenv("FORGESTATE_REPO", f"{fake_forge.owner}/{fake_forge.repo}")
    source = transcript().replace('"acme", "app"', f'"{fake_forge.owner}", "{fake_forge.repo}"')
    before = fake_forge.comments()
    run(source)
    assert fake_forge.comments() == before + 1, "the one checkpoint is on the forge"
    assert not (local_store / "thread.jsonl").exists()


def test_the_api_paragraph_names_every_setting_and_error() -> None:
    import inspect

    import forgestate.errors
    from forgestate import Client

    text = (REPO_ROOT / "docs" / "python.md").read_text()
    settings = [p for p in inspect.signature(Client.__init__).parameters if p != "self"]
    errors = [n for n in forgestate.errors.__all__ if n[0].isupper()]
    missing = [n for n in settings + errors + ["AsyncClient"] if f"{n}" not in text]
    assert not missing, f"docs/python.md does not name {missing}"
