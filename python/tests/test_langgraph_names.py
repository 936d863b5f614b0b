"""Thread ids at the LangGraph saver's boundary: one thread per name as the CLI stores it (NFC),
and a name forgestate cannot take refused as docs/langgraph.md says."""

from __future__ import annotations

import uuid
from typing import Any, Dict, TypedDict

import pytest

pytest.importorskip("langgraph.graph")

from langgraph.graph import END, START, StateGraph  # noqa: E402

from forgestate import Client, DataError, UsageError  # noqa: E402
from forgestate.langgraph import ForgeStateSaver  # noqa: E402


class S(TypedDict, total=False):
    n: int


def _app(saver: ForgeStateSaver) -> Any:
    g = StateGraph(S)
    g.add_node("step", lambda s: {"n": s.get("n", 0) + 1})
    g.add_edge(START, "step")
    g.add_edge("step", END)
    return g.compile(checkpointer=saver)


def _cfg(thread: str, ns: str = "") -> Dict[str, Any]:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}


def test_a_decomposed_thread_id_is_the_same_thread_as_its_composed_form(local_store) -> None:
    tag = uuid.uuid4().hex[:6]
    nfd, nfc = f"cafe\u0301-{tag}", f"caf\u00e9-{tag}"
    with Client(store=local_store) as client:
        app = _app(ForgeStateSaver(client))
        assert app.invoke({"n": 0}, _cfg(nfd)) == {"n": 1}
        assert app.get_state(_cfg(nfd)).values == {"n": 1}
        assert app.invoke({}, _cfg(nfd)) == {"n": 2}  # continues, not a fresh start
        assert app.get_state(_cfg(nfc)).values == {"n": 2}  # one thread, as the CLI stores it
        assert {r.session for r in client.list().records} == {nfc}
        # Another saver's reads and deletes find it by either spelling.
        other = ForgeStateSaver(client)
        listed = [t.checkpoint["id"] for t in other.list(_cfg(nfd))]
        assert listed and listed == [t.checkpoint["id"] for t in other.list(_cfg(nfc))]
        assert other.get_tuple(_cfg(nfd)).checkpoint["channel_values"]["n"] == 2
        other.delete_thread(nfd)
        assert other.get_tuple(_cfg(nfc)) is None


def test_a_thread_id_over_200_characters_is_a_data_error(local_store) -> None:
    with Client(store=local_store) as client:
        saver = ForgeStateSaver(client)
        with pytest.raises(DataError, match="200"):
            _app(saver).invoke({"n": 0}, _cfg("t" * 201))
        # As documented: a `[` is a usage error (the reads take names as globs).
        with pytest.raises(UsageError):
            _app(saver).invoke({"n": 0}, _cfg("a[b"))
        assert client.list().records == []
