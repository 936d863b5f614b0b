"""Benchmark: the cost of a LangGraph checkpointer's `put` and `get_tuple`, ForgeStateSaver on the
local store and on the fake forge (with a fixed latency per answer) against LangGraph's
InMemorySaver. Prints one table; asserts nothing.

    cargo build --release --locked --features dev-examples --example fake_forge
    pip install ".[langgraph]" -r python/tests/requirements-langgraph.txt
    FORGESTATE_BIN=target/release/forgestate python python/bench_langgraph.py --steps 200

Each step is what a graph's super-step costs the checkpointer: one `put` of a checkpoint whose
state grows by one message, then (as LangGraph does when a run starts) one `get_tuple`. The
fake forge also counts the requests it received.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from forgestate import Client
from forgestate.langgraph import ForgeStateSaver

ROOT = Path(__file__).resolve().parents[1]


def run(saver: Any, steps: int, thread: str) -> Dict[str, List[float]]:
    config: Dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    messages: List[Dict[str, str]] = []
    puts, gets = [], []
    for step in range(steps):
        messages.append({"role": "assistant", "content": f"step {step}: " + "words " * 20})
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": list(messages), "step": step}
        cp["channel_versions"] = {"messages": step + 1, "step": step + 1}
        t0 = time.perf_counter()
        config = saver.put(config, cp, {"source": "loop", "step": step, "parents": {}},
                           {"messages": step + 1, "step": step + 1})
        t1 = time.perf_counter()
        got = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        t2 = time.perf_counter()
        assert got is not None and got.checkpoint["channel_values"]["step"] == step
        puts.append(t1 - t0)
        gets.append(t2 - t1)
    return {"put": puts, "get_tuple": gets}


class Fake:
    def __init__(self, binary: Path, latency_ms: int) -> None:
        self.proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.hello = json.loads(self.proc.stdout.readline())
        self.say(f"latency {latency_ms}")

    def say(self, line: str) -> Optional[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline() if line == "requests" else None

    def requests(self) -> int:
        return int(json.loads(self.say("requests") or "{}")["requests"])

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


def ms(xs: List[float]) -> str:
    return f"{statistics.median(xs) * 1000:.2f} ms"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--latency-ms", type=int, default=20)
    ap.add_argument("--fake", default=str(ROOT / "target" / "release" / "examples" / "fake_forge"))
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="bench-langgraph-")
    os.environ.update({"HOME": home, "XDG_STATE_HOME": f"{home}/state",
                       "XDG_CACHE_HOME": f"{home}/cache", "XDG_CONFIG_HOME": f"{home}/config"})
    rows = []
    memory = run(InMemorySaver(), args.steps, "t-mem")
    rows.append(("InMemorySaver", memory, "-"))
    with Client(store=f"{home}/local") as c:
        local = run(ForgeStateSaver(c), args.steps, "t-local")
    rows.append(("ForgeStateSaver, local store", local, "-"))
    fake = Fake(Path(args.fake), args.latency_ms)
    try:
        os.environ["FORGESTATE_URL"] = fake.hello["url"]
        os.environ["FORGESTATE_TOKEN"] = fake.hello["token"]
        with Client(repo=f"{fake.hello['owner']}/{fake.hello['repo']}") as c:
            saver = ForgeStateSaver(c)
            run(saver, 1, "t-warmup")  # the session issue and the read cache
            before = fake.requests()
            forge = run(saver, args.steps, "t-forge")
            per_step = (fake.requests() - before) / args.steps
    finally:
        fake.close()
    rows.append((f"ForgeStateSaver, fake forge ({args.latency_ms} ms per answer)", forge,
                 f"{per_step:.2f}"))
    print(f"{args.steps} steps, medians (the state grows by one message per step)")
    print(f"{'checkpointer':<48} {'put':>10} {'get_tuple':>11}  requests/step")
    for name, r, req in rows:
        print(f"{name:<48} {ms(r['put']):>10} {ms(r['get_tuple']):>11}  {req}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
