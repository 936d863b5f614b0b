"""Fixtures for the Python package's tests: an isolated environment, the local store, and the
fake forge (`examples/fake_forge.rs`) as a child process.

The package under test is the installed wheel (its bundled binary beside this interpreter), so
these tests run against exactly what `pip install .` gives.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Iterator, Optional

import pytest

from forgestate import session_state

REPO_ROOT = Path(__file__).resolve().parents[2]
SEED = "seeds/003_6e1e09118f29b57e.txt"

#: Short budgets, so a forge that is down costs a second, not the default 30 s.
QUICK_CONFIG = """\
[forge]
connect_timeout_secs = 1
request_timeout_secs = 5
retry_budget_secs = 1
drain_budget_secs = 1
drain_max_backoff_secs = 1
"""


def shared_file(relative: str) -> Path:
    """A file of the reference material `shared/` beside the checkout or one of its parents."""
    looked = []
    for parent in [REPO_ROOT, *REPO_ROOT.parents]:
        candidate = parent / "shared" / relative
        if candidate.is_file():
            return candidate
        looked.append(str(candidate))
    # A plain clone has no shared/ (CI always has it): the test says so in one line and passes.
    pytest.skip(f"{relative} (the reference material) not found; looked in {looked}")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME and XDG directories, no FORGESTATE_* settings from the
    machine, a config file with short budgets, and a fresh session_state client."""
    for name in list(os.environ):
        if name.startswith("FORGESTATE_") and name != "FORGESTATE_BIN":
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    config = tmp_path / "forgestate.toml"
    config.write_text(QUICK_CONFIG)
    monkeypatch.setenv("FORGESTATE_CONFIG", str(config))
    # Never a git remote of the checkout: work from the temp directory.
    monkeypatch.chdir(tmp_path)
    session_state.configure(None)
    yield home
    session_state.configure(None)


@pytest.fixture
def local_store(isolated: Path) -> Path:
    """The default local store directory (what the CLI uses with no forge configured)."""
    return isolated / "state" / "forgestate" / "local"


class FakeForge:
    """The fake Forgejo child process: its URL, owner, repo and token, and its steering."""

    def __init__(self, proc: subprocess.Popen, hello: dict) -> None:
        self.proc = proc
        self.url: str = hello["url"]
        self.owner: str = hello["owner"]
        self.repo: str = hello["repo"]
        self.token: str = hello["token"]
        self.login: str = hello["login"]
        self.untrusted_token: str = hello["untrusted_token"]

    def _say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def down(self) -> None:
        self._say("down")

    def up(self) -> None:
        self._say("up")

    def comments(self) -> int:
        self._say("comments")
        assert self.proc.stdout is not None
        return int(json.loads(self.proc.stdout.readline())["comments"])

    def requests(self) -> int:
        """How many requests the fake has received so far."""
        self._say("requests")
        assert self.proc.stdout is not None
        return int(json.loads(self.proc.stdout.readline())["requests"])


def fake_forge_binary() -> Path:
    explicit: Optional[str] = os.environ.get("FAKE_FORGE_BIN")
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO_ROOT / "target")
    if not target.is_absolute():
        target = REPO_ROOT / target
    path = Path(explicit) if explicit else target / "debug" / "examples" / "fake_forge"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: build it with `cargo build --features dev-examples --example fake_forge` "
            "(or set FAKE_FORGE_BIN)"
        )
    return path


@pytest.fixture
def fake_forge(monkeypatch: pytest.MonkeyPatch, isolated: Path) -> Iterator[FakeForge]:
    """A fresh fake forge, configured through the environment as an agent would be."""
    proc = subprocess.Popen(
        [str(fake_forge_binary())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        hello = json.loads(proc.stdout.readline())
        fake = FakeForge(proc, hello)
        monkeypatch.setenv("FORGESTATE_URL", fake.url)
        monkeypatch.setenv("FORGESTATE_TOKEN", fake.token)
        yield fake
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(params=["local", "forge"])
def backend(request: pytest.FixtureRequest, local_store: Path):
    """Runs a test once on the local store and once on the fake forge: yields (owner, repo)."""
    if request.param == "forge":
        fake = request.getfixturevalue("fake_forge")
        return fake.owner, fake.repo
    return "acme", "app"
