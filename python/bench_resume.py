"""30 ``Client.resume`` calls against 30 ``forgestate --json resume`` processes, on a local store.

    FORGESTATE_BIN=target/release/forgestate python3 python/bench_resume.py [--calls 30] [--rounds 5]

Each round times the processes, then a fresh ``Client`` (its ``forgestate call --lines`` child's
start counted in its time), on the same store of a few checkpoints, in an isolated HOME with an
empty config file. Prints each round and the medians: the CLI's time, the client's, and the
ratio (the client's time over the CLI's; issue #28 asks for at most 0.5). A measurement, never
a test: the figures go into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from forgestate import Client, _run  # noqa: E402

W = "implementation-worker"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    binary = _run.find_binary()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        config = Path(tmp) / "forgestate.toml"
        config.write_text("")
        for name in [k for k in os.environ if k.startswith("FORGESTATE_") and k != "FORGESTATE_BIN"]:
            del os.environ[name]
        os.environ.update(HOME=str(home), FORGESTATE_CONFIG=str(config),
                          XDG_STATE_HOME=str(home / "state"), XDG_CACHE_HOME=str(home / "cache"))
        os.chdir(tmp)
        store = str(Path(tmp) / "store")
        with Client(store, binary=binary) as c:
            for n in range(1, 6):
                c.checkpoint(W, "s1", f"subtask_{n}_complete", {"n": n, "files": ["a.py"] * 20})
        argv = [binary, "--json", "--store", store, "resume", "--agent", W, "--session", "s1"]
        cli_times, client_times = [], []
        print(f"binary: {binary}")
        print(f"{opts.calls} resumes per round; seconds")
        for r in range(opts.rounds):
            start = time.perf_counter()
            for _ in range(opts.calls):
                subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
            cli = time.perf_counter() - start
            start = time.perf_counter()
            with Client(store, binary=binary) as c:
                for _ in range(opts.calls):
                    assert c.resume(W, "s1").phase == "subtask_5_complete"
            client = time.perf_counter() - start
            cli_times.append(cli)
            client_times.append(client)
            print(f"round {r + 1}: processes {cli:.3f}  Client {client:.3f}  ratio {client / cli:.2f}")
        cli, client = statistics.median(cli_times), statistics.median(client_times)
        print(f"median:  processes {cli:.3f}  Client {client:.3f}  ratio {client / cli:.2f}")
        print(f"per call: processes {cli / opts.calls * 1000:.1f} ms  "
              f"Client {client / opts.calls * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
