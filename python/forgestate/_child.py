"""The long-lived ``forgestate call --lines`` child a :class:`~forgestate.Client` talks to.

One request line in (``{"verb": NAME, "args": {...}}``), one answer line out (``{"answer":
{...}}`` or ``{"error": {...}}``): the binary runs the verb with the same ``verbs::call`` as its
MCP server, over a store it opened once. The child's stderr (warnings, ``-v`` logs) goes to the
``forgestate`` logger, line by line, from a daemon thread.
"""

from __future__ import annotations

import collections
import logging
import os
import subprocess
import threading
import weakref
from typing import IO, Any, Deque, List, Mapping, Optional, Sequence

from .errors import BinaryNotFound, StorageError

log = logging.getLogger("forgestate")


class Child:
    """One running ``forgestate [GLOBALS] call --lines``. Not thread-safe: the client holds a lock
    around :meth:`ask`. ``key`` is what the child was started under (the working directory and
    the environment that configures it); the client starts another when that changes."""

    def __init__(
        self,
        binary: str,
        globals_: Sequence[str],
        env: Optional[Mapping[str, str]],
        key: Any,
    ) -> None:
        self.binary = binary
        self.key = key
        self.pid = os.getpid()
        self.tail: Deque[str] = collections.deque(maxlen=20)
        try:
            self.proc = subprocess.Popen(
                [binary, *globals_, "call", "--lines"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
            )
        except OSError as e:
            raise BinaryNotFound(
                f"cannot run {binary}: {e}; set FORGESTATE_BIN or reinstall"
            ) from e
        except ValueError as e:
            raise StorageError(f"cannot start {binary}: {e}") from e
        reader = threading.Thread(
            target=_log_lines, args=(self.proc.stderr, self.tail), daemon=True,
            name="forgestate-stderr",
        )
        reader.start()
        self._stop = weakref.finalize(self, _stop, self.proc, self.pid)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, line: bytes) -> Optional[str]:
        """Sends one request line; the answer line, or ``None`` when the child ended without
        one (see :meth:`died`)."""
        stdin: Optional[IO[bytes]] = self.proc.stdin
        stdout: Optional[IO[bytes]] = self.proc.stdout
        if stdin is None or stdout is None:
            return None
        try:
            stdin.write(line)
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # it ended: whatever it printed before is read below
        try:
            answer = stdout.readline()
        except (OSError, ValueError):
            return None
        if not answer:
            return None
        return answer.decode("utf-8", "replace")

    def died(self, verb: str) -> StorageError:
        """The error of a request the child did not answer."""
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        last = next((l for l in reversed(self.tail) if l.strip()), "")
        if code is not None and code < 0:
            how = f"was killed by signal {-code}"
        elif code is not None:
            how = f"exited with code {code}"
        else:
            how = "stopped answering"
        said = f": {last}" if last else ""
        return StorageError(
            f"forgestate call --lines {how} before answering {verb}{said}; the next call starts "
            "it again (if this repeats, run the verb with the CLI and --json to see why)"
        )

    def close(self) -> None:
        """Ends the child: stdin closed (it exits 0 at end of input), killed if it lingers."""
        self._stop()


def _stop(proc: "subprocess.Popen[bytes]", pid: int) -> None:
    # After a fork, the copy of a client in the new process must not stop its parent's child.
    if os.getpid() != pid:
        return
    for stream in (proc.stdin,):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    except Exception:  # noqa: BLE001 - at interpreter exit, anything may be half torn down
        pass
    for stream in (proc.stdout, proc.stderr):
        try:
            if stream is not None:
                stream.close()
        except (OSError, ValueError):
            pass


def _log_lines(stream: Optional[IO[bytes]], tail: Deque[str]) -> None:
    """The child's stderr into the ``forgestate`` logger: warnings as warnings, the rest (error
    lines, whose message the answer carries; ``-v`` logs) at debug."""
    if stream is None:
        return
    try:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            tail.append(line)
            if line.startswith("forgestate: warning:"):
                log.warning("%s", line)
            else:
                log.debug("%s", line)
    except (OSError, ValueError):
        return


def environment_key() -> Any:
    """What a child started now is configured by besides the client's own settings: the
    working directory (a relative path, ``./forgestate.toml``, the git remote) and the
    environment variables the binary reads. When it changes, the client starts a new child, so
    a call sees the same configuration a fresh ``forgestate`` process would."""
    try:
        cwd: Optional[str] = os.getcwd()
    except OSError:
        cwd = None
    names: List[str] = ["HOME", "USER", "USERNAME", "LOGNAME", "NO_COLOR"]
    env = tuple(
        sorted(
            (k, v)
            for k, v in os.environ.items()
            if k.startswith(("FORGESTATE_", "XDG_")) or k in names
        )
    )
    return (cwd, env)
