"""Holes found by attacking the Python package as a careless caller: text that cannot reach the
command at all (a lone surrogate, a NUL) raised raw `UnicodeEncodeError`/`ValueError` where the
seed's `parse_checkpoint_comment` returns None and the typed API promises `ForgestateError`s; a
name or handoff line starting with a dash (`-1`) was refused as an unknown flag. Data nested past
Python's recursion limit raised a raw `RecursionError`, and a call cancelled while the forge
hung held up the next call until the old child gave up on the forge (or was killed 5 s later)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any, Iterator, List

import pytest

from forgestate import AsyncClient, Client, DataError
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


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_data_too_deep_for_python_to_write_is_a_data_error_naming_it(local_store):
    c = Client()
    with pytest.raises(DataError, match="data nests too deeply"):
        c.checkpoint("w", "s", "p", {"deep": nested(100_000)})
    with pytest.raises(DataError, match="metrics nests too deeply"):
        c.health("w", "s", {"deep": nested(100_000)})
    assert c.checkpoint("w", "s", "p", {"ok": 1}).posted, "the client still works"


def test_data_as_deep_as_the_cli_takes_is_saved_through_the_client(local_store):
    # `--data` takes an object 126 levels deep; the request line wraps it in three more.
    deep: Any = 1
    for _ in range(125):
        deep = {"a": deep}
    c = Client()
    assert c.checkpoint("w", "s", "p", {"a": deep}).posted
    assert c.resume("w", "s").data == {"a": deep}
    with pytest.raises(DataError, match="recursion limit"):
        c.checkpoint("w", "s", "p", {"a": nested(300)})


@pytest.fixture
def hung_forge() -> Iterator[str]:
    """A forge that accepts connections and never answers: its URL."""
    server = socket.create_server(("127.0.0.1", 0))
    held: List[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in held:
        conn.close()


def test_a_call_cancelled_while_the_forge_hangs_does_not_hold_up_the_next(
    isolated, hung_forge, monkeypatch
):
    # A read with no read cache waits for the forge, here up to its 10 s budget.
    monkeypatch.setenv("FORGESTATE_WAIT", "10s")

    async def main() -> float:
        c = AsyncClient(url=hung_forge, repo="acme/app", token="t" * 40, allow_insecure_http=True)
        try:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(c.resume("w", "s"), 0.5)
            started = time.monotonic()
            # The next verb needs no forge: it answers at once from a new child.
            assert (await c.resume_map("implementation-worker")).default == "start"
            return time.monotonic() - started
        finally:
            await c.aclose()

    took = asyncio.run(main())
    assert took < 3, f"the next call waited {took:.1f} s for the cancelled one"
