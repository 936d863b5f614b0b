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
from typing import IO, Any, Deque, Dict, List, Mapping, Optional, Sequence, TypeVar

from . import _run
from .errors import BinaryNotFound, DataError, StorageError, error_for, reworded

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


_C = TypeVar("_C", bound="Calls")


class Calls:
    """How a :class:`~forgestate.Client` runs its verbs: one child per client and process,
    started on the first verb, one request at a time. The client supplies ``binary``,
    ``strict``, ``_argv()`` (its global flags) and ``_env()`` (the environment with its token)."""

    binary: Optional[str]
    strict: bool

    def _argv(self) -> List[str]:
        raise NotImplementedError

    def _env(self) -> Optional[Dict[str, str]]:
        raise NotImplementedError

    def _fresh_process_state(self) -> None:
        """No child yet, and a lock of this process's own (a copy or a fork shares neither)."""
        self._child: Optional[Child] = None
        self._lock = threading.Lock()
        self._lock_pid = os.getpid()

    def __getstate__(self) -> Dict[str, Any]:
        # A copy (copy, deepcopy, pickle) gets its own child and lock, started when it is used.
        return {k: v for k, v in self.__dict__.items() if k not in ("_child", "_lock", "_lock_pid")}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fresh_process_state()

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Ends the ``forgestate call --lines`` child, if one runs (a later verb starts another)."""
        child, self._child = self.__dict__.get("_child"), None
        if child is not None and child.pid == os.getpid():
            child.close()

    def _call(self, verb: str, **args: Any) -> Mapping[str, Any]:
        """Runs ``verb`` on its request (``args`` are the request's fields; ``None`` leaves a
        field out) and returns its answer, or raises the error it answered."""
        request = {"verb": verb, "args": {k: v for k, v in args.items() if v is not None}}
        line = encode(request, verb)
        if self._lock_pid != os.getpid():
            # A fork: the parent's lock may be held by a thread that does not exist here.
            self._fresh_process_state()
        with self._lock:
            child = self._running()
            text = child.ask(line)
            if text is None:
                error = child.died(verb)
                self._child = None
                raise error
        try:
            reply = _run.loads(text)
        except ValueError as e:
            # An answer read as nothing would be a blank answer (a fresh start from `resume`).
            raise StorageError(
                f"forgestate answered {verb} with JSON this package cannot read ({e}); nothing "
                "was assumed from it. Run the verb with the CLI and --json to see the answer, "
                "and report this"
            ) from e
        error = reply.get("error") if isinstance(reply, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            code = error.get("code")
            raised = error_for(code if isinstance(code, int) else 74, error["message"],
                               error.get("reason"))
            # The binary's messages may name its flags; a Python caller knows parameters.
            raise reworded(raised)
        answer = reply.get("answer") if isinstance(reply, dict) else None
        if not isinstance(answer, Mapping):
            raise StorageError(
                f"forgestate answered {verb} with neither an answer nor an error ({text[:200]!r})"
                "; report this"
            )
        return answer

    def _running(self) -> Child:
        """The child for this process and environment, started when there is none."""
        key = environment_key()
        child = self._child
        if child is not None and (child.pid != os.getpid() or child.key != key
                                  or not child.alive()):
            self.close()
            child = None
        if child is None:
            strict = ["--strict"] if self.strict else []
            binary = self.binary or _run.find_binary()
            child = Child(binary, [*self._argv(), *strict], self._env(), key)
            self._child = child
        return child


def encode(request: Mapping[str, Any], verb: str) -> bytes:
    """One request line, its integers written whole; what JSON cannot carry is a DataError
    naming the argument."""
    try:
        text = _run.dumps(request, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        args = request.get("args") or {}
        for name, value in args.items():
            try:
                _run.dumps(value, allow_nan=False)
            except (TypeError, ValueError) as inner:
                raise DataError(f"{name} cannot be written as JSON: {inner}") from inner
        raise DataError(f"the arguments of {verb} cannot be written as JSON: {e}") from e
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError as e:
        raise DataError(
            f"an argument is not valid Unicode text ({e.reason} at character {e.start}); "
            "names and values must be text that can be written as UTF-8"
        ) from e
