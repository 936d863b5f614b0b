"""A LangGraph saver never loses work silently: once another writer took a thread over (another
saver's ``take_over()``, or the CLI's ``resume --take-over``), the saver's next ``put`` raises
:class:`forgestate.Fenced` naming the new owner and how to continue, and posts nothing."""

from __future__ import annotations

import uuid
from typing import Any, Dict, List, TypedDict

import pytest

pytest.importorskip("langgraph.graph")

from langgraph.graph import END, START, StateGraph  # noqa: E402

from forgestate import Client, Fenced  # noqa: E402
from forgestate.langgraph import ForgeStateSaver  # noqa: E402


class S(TypedDict, total=False):
    n: int


def _graph(saver: ForgeStateSaver, ran: List[str]) -> Any:
    """Nodes a, b, c in a row, interrupted before b and before c."""
    g = StateGraph(S)
    for name in "abc":
        g.add_node(name, lambda s, name=name: ran.append(name) or {"n": s.get("n", 0) + 1})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver, interrupt_before=["b", "c"])


def _cfg(thread: str) -> Dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _posted(client: Client, thread: str) -> int:
    return len(client.list(session=thread).records)


def test_a_saver_whose_thread_another_saver_took_over_raises_fenced(local_store) -> None:
    with Client(store=local_store) as client:
        ran: List[str] = []
        thread = f"own-{uuid.uuid4().hex[:8]}"
        old, new = ForgeStateSaver(client), ForgeStateSaver(client)
        _graph(old, ran).invoke({"n": 0}, _cfg(thread))  # runs a, stops before b
        new.take_over(thread)
        before = _posted(client, thread)
        with pytest.raises(Fenced) as e:
            _graph(old, ran).invoke(None, _cfg(thread))
        assert new.writer in str(e.value) and "take_over(" in str(e.value), e.value
        assert _posted(client, thread) == before  # nothing posted that readers would ignore
        # The new owner continues where the old one stopped.
        app = _graph(new, ran)
        assert app.invoke(None, _cfg(thread)) == {"n": 2}
        assert app.invoke(None, _cfg(thread)) == {"n": 3}
        assert ran == ["a", "b", "c"], ran  # b ran once: the old saver stopped at its read


def test_after_a_cli_takeover_a_fresh_saver_raises_then_continues_once_it_takes_over(
    local_store,
) -> None:
    with Client(store=local_store) as client:
        ran: List[str] = []
        thread = f"cli-{uuid.uuid4().hex[:8]}"
        _graph(ForgeStateSaver(client), ran).invoke({"n": 0}, _cfg(thread))
        # A supervisor hands the thread to its own writer (the CLI's `resume --take-over`).
        with Client(store=local_store) as supervisor:
            owner = supervisor.resume("langgraph", thread, take_over=True).owner.owner
        saver = ForgeStateSaver(client)  # the next worker, as after a process restart
        with pytest.raises(Fenced) as e:
            _graph(saver, ran).invoke(None, _cfg(thread))
        assert owner in str(e.value) and f"take_over({thread!r})" in str(e.value), e.value
        assert ran == ["a"] or ran == ["a", "b"], ran
        ran.clear()
        saver.take_over(thread)
        app = _graph(saver, ran)
        assert app.invoke(None, _cfg(thread)) == {"n": 2}
        assert app.invoke(None, _cfg(thread)) == {"n": 3}
        assert app.get_state(_cfg(thread)).next == ()


def test_a_saver_that_is_the_new_owner_continues_without_a_takeover(local_store,
                                                                     monkeypatch) -> None:
    """The supervisor's handoff: `resume --take-over --writer NAME`, and the worker's saver
    writes as NAME (``writer=`` or ``FORGESTATE_WRITER``)."""
    with Client(store=local_store) as client:
        ran: List[str] = []
        thread = f"named-{uuid.uuid4().hex[:8]}"
        _graph(ForgeStateSaver(client), ran).invoke({"n": 0}, _cfg(thread))
        client.resume("langgraph", thread, take_over=True, writer="worker-7")
        app = _graph(ForgeStateSaver(client, writer="worker-7"), ran)
        assert app.invoke(None, _cfg(thread)) == {"n": 2}
        assert ran == ["a", "b"]
        monkeypatch.setenv("FORGESTATE_WRITER", "worker-7")
        assert ForgeStateSaver(client).writer == "worker-7"
        assert ForgeStateSaver(client, writer="other").writer == "other"
