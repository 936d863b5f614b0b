"""A two-node LangGraph graph whose checkpoints live in forgestate: it is interrupted before its
second node in one process and finished by another, from the thread.

    pip install "forgestate[langgraph]" langgraph
    python examples/langgraph_two_nodes.py start  THREAD "a topic"   # runs `write`, stops
    python examples/langgraph_two_nodes.py resume THREAD             # another process: `review`
    forgestate list --session THREAD                                 # every step, as records

The store is whatever forgestate is configured with (FORGESTATE_URL/OWNER/REPO/TOKEN for a forge,
else the local store). Each command prints one JSON line: the graph's values and what runs next.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, TypedDict

from langgraph.graph import END, START, StateGraph

from forgestate import Client
from forgestate.langgraph import ForgeStateSaver


class State(TypedDict, total=False):
    topic: str
    draft: str
    final: str


def write(state: State) -> Dict[str, Any]:
    return {"draft": f"notes on {state['topic']}"}


def review(state: State) -> Dict[str, Any]:
    return {"final": state["draft"].upper()}


def build(saver: ForgeStateSaver) -> Any:
    graph = StateGraph(State)
    graph.add_node("write", write)
    graph.add_node("review", review)
    graph.add_edge(START, "write")
    graph.add_edge("write", "review")
    graph.add_edge("review", END)
    return graph.compile(checkpointer=saver, interrupt_before=["review"])


def main(argv: list) -> int:
    if len(argv) < 2 or argv[0] not in ("start", "resume"):
        print(__doc__, file=sys.stderr)
        return 64
    command, thread = argv[0], argv[1]
    with Client.from_env() as client:
        app = build(ForgeStateSaver(client))
        config = {"configurable": {"thread_id": thread}}
        if command == "start":
            topic = argv[2] if len(argv) > 2 else "checkpoints"
            app.invoke({"topic": topic}, config)
        else:
            app.invoke(None, config)
        state = app.get_state(config)
        print(json.dumps({"values": state.values, "next": list(state.next)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
