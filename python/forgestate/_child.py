"""The long-lived ``forgestate call --lines`` child a client talks to, for threads
(:class:`Calls`) and asyncio (:class:`AsyncCalls`): one request line in, one answer line out,
run by the same ``verbs::call`` as the MCP server over a store opened once; the child keeps the
lineage (``Parent:``). A verb it does not run (``_verbs.MACHINE``) runs as ``forgestate --json
VERB``. Its stderr goes to the ``forgestate`` logger."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import select
import subprocess
import threading
import weakref
from typing import IO, Any, Callable, Deque, Dict, Generator, Iterator, List, Mapping, Optional

from . import _run, _verbs
from .errors import BinaryNotFound, DataError, ForgestateError, StorageError, reworded

log = logging.getLogger("forgestate")

#: The longest answer line read from the child (a record is capped far below it).
LIMIT = 1 << 28


def _log(line: str, tail: Deque[str]) -> None:
    """One stderr line: warnings as warnings, the rest (error lines, whose message the answer
    carries; ``-v`` logs) at debug."""
    tail.append(line)
    log.log(logging.WARNING if line.startswith("forgestate: warning:") else logging.DEBUG, "%s", line)


def _log_lines(stream: Optional[IO[bytes]], tail: Deque[str]) -> None:
    try:
        for raw in iter(stream.readline, b"") if stream is not None else ():
            _log(raw.decode("utf-8", "replace").rstrip("\n"), tail)
    except (OSError, ValueError):
        return


def environment_key() -> Any:
    """What a child is configured by besides the client's settings: the working directory and
    the environment the binary reads. When it changes, the client starts a new child, so a call
    sees what a fresh ``forgestate`` process would."""
    try:
        cwd: Optional[str] = os.getcwd()
    except OSError:
        cwd = None
    names = ("HOME", "USER", "USERNAME", "LOGNAME", "NO_COLOR")
    return (cwd, tuple(sorted((k, v) for k, v in os.environ.items()
                              if k.startswith(("FORGESTATE_", "XDG_")) or k in names)))


def encode(verb: str, args: Mapping[str, Any]) -> bytes:
    """One request line (``None`` leaves a field out), its integers written whole; what JSON
    cannot carry is a DataError naming the argument."""
    args = {k: v for k, v in args.items() if v is not None}
    try:
        text = _run.dumps({"verb": verb, "args": args}, ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError as e:
        raise DataError(f"an argument is not valid Unicode text ({e.reason} at character "
                        f"{e.start}); names and values must be text that can be written as UTF-8") from e
    except (TypeError, ValueError, RecursionError) as e:
        for name, value in args.items():
            try:
                _run.dumps(value, allow_nan=False)
            except RecursionError as inner:
                raise DataError(f"{name} nests too deeply to be written as JSON; forgestate reads "
                                "a value at most 127 levels deep: store it flatter") from inner
            except (TypeError, ValueError) as inner:
                raise DataError(f"{name} cannot be written as JSON: {inner}") from inner
        raise DataError(f"the arguments of {verb} cannot be written as JSON: {e}") from e


def read(verb: str, text: bytes) -> Mapping[str, Any]:
    """The answer in the child's line, or the error it says."""
    reply = _run.document(verb, text)
    answer = reply.get("answer") if isinstance(reply, dict) else None
    if not isinstance(answer, Mapping):
        raise StorageError(f"forgestate answered {verb} with neither an answer nor an error "
                           f"({text[:200]!r}); report this")
    return answer


#: What an exchange with the child waits for: ``(fd, True)`` to write, ``(fd, False)`` to
#: read, ``(None, None)`` for the child to exit.
Waits = Generator[Any, None, bytes]


class Child:
    """One running ``forgestate [GLOBALS] call --lines``, its pipes non-blocking, started under
    ``key`` (see :func:`environment_key`). :meth:`exchange` says what it waits for; the sync
    client waits with ``select``, the async one with the event loop."""

    def __init__(self, argv: List[str], env: Optional[Dict[str, str]], key: Any) -> None:
        self.key, self.pid, self.buf, self.broken = key, os.getpid(), b"", False
        self.tail: Deque[str] = collections.deque(maxlen=20)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=env)
        except OSError as e:
            raise BinaryNotFound(f"cannot run {argv[0]}: {e}; set FORGESTATE_BIN or reinstall") from e
        except ValueError as e:
            raise StorageError(f"cannot start {argv[0]}: {e}") from e
        self.fds = (self.proc.stdin.fileno(), self.proc.stdout.fileno())  # type: ignore[union-attr]
        for fd in self.fds:
            os.set_blocking(fd, False)
        threading.Thread(target=_log_lines, args=(self.proc.stderr, self.tail), daemon=True,
                         name="forgestate-stderr").start()
        self.close = weakref.finalize(self, _stop, self.proc, self.pid)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def usable(self, key: Any) -> bool:
        return (self.pid == os.getpid() and self.key == key and not self.broken
                and self.proc.poll() is None)

    def exchange(self, verb: str, line: bytes) -> Waits:
        """Writes ``line`` and returns the answer line, yielding whenever it must wait."""
        self.broken = True  # until the whole answer is read: a call cut short leaves it behind
        view = memoryview(line)
        while view:
            try:
                view = view[os.write(self.fds[0], view):]
            except BlockingIOError:
                yield (self.fds[0], True)
            except OSError:
                break  # it ended: whatever it printed before is read below
        while b"\n" not in self.buf:
            try:
                chunk = os.read(self.fds[1], 1 << 16)
            except BlockingIOError:
                yield (self.fds[1], False)
                continue
            except OSError:
                chunk = b""
            if not chunk or len(self.buf) > LIMIT:
                yield (None, None)
                code = self.proc.poll()
                how = ("stopped answering" if code is None else f"was killed by signal {-code}"
                       if code < 0 else f"exited with code {code}")
                last = next((line for line in reversed(self.tail) if line.strip()), "")
                raise StorageError(
                    f"forgestate call --lines {how} before answering {verb}"
                    f"{': ' + last if last else ''}; the next call starts it again (if this "
                    "repeats, run the verb with the CLI and --json)")
            self.buf += chunk
        answer, self.buf = self.buf.split(b"\n", 1)
        self.broken = False
        return answer


def _stop(proc: "subprocess.Popen[bytes]", pid: int) -> None:
    """Ends a child: stdin closed (it exits 0 at end of input), killed if it lingers. After a
    fork, the copy of a client in the new process leaves its parent's child alone."""
    if os.getpid() != pid:
        return
    try:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
    except Exception:  # noqa: BLE001 - at interpreter exit, anything may be half torn down
        pass
    for stream in (proc.stdout, proc.stderr):
        try:
            stream.close()  # type: ignore[union-attr]
        except (OSError, ValueError, AttributeError):
            pass


class _Transport:
    """What both transports share. The client supplies ``binary``, ``strict``, ``_argv()`` and
    ``_env()``; a copy (copy, pickle) or a fork gets a child and a lock of its own."""

    binary: Optional[str]
    strict: bool
    _child: Optional[Child]
    _argv: Callable[[], List[str]]
    _env: Callable[[], Optional[Dict[str, str]]]
    _SETTINGS = ("store", "url", "owner", "repo", "token_file", "config", "allow_insecure_http",
                 "strict")

    def _fresh_process_state(self) -> None:
        self._child, self._lock, self._lock_pid = None, self._new_lock(), os.getpid()

    def _new_lock(self) -> Any:
        return threading.Lock()

    def __getstate__(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_child", "_lock", "_lock_pid")}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fresh_process_state()

    def close(self) -> None:
        """Ends the ``forgestate call --lines`` child, if one runs (a later verb starts another)."""
        child, self._child = self.__dict__.get("_child"), None
        if child is not None:
            child.close()

    def _command(self, *verb: str) -> List[str]:
        strict = ["--strict"] if self.strict else []
        return [self.binary or _run.find_binary(), *self._argv(), *strict, *verb]

    def _running(self) -> Child:
        """The child for this process and environment, started when there is none."""
        key = environment_key()
        if self._child is not None and not self._child.usable(key):
            old, self._child = self._child, None
            if old.broken and old.alive() and old.pid == os.getpid():
                # A call cut short (cancelled, interrupted): the child finishes that verb before
                # it reads the end of its input, which may take its whole patience. It ends on
                # its own, beside the new one: the next call does not wait for it.
                threading.Thread(target=old.close, daemon=True, name="forgestate-stop").start()
            else:
                old.close()
        if self._child is None:
            self._child = Child(self._command("call", "--lines"), self._env(), key)
        return self._child

    def _machine(self, verb: str, args: Mapping[str, Any]) -> List[str]:
        return self._command("--json", verb, *_run.flags(_verbs.MACHINE[verb], args))

    @contextlib.contextmanager
    def _failures(self, verb: str) -> Iterator[None]:
        """Each failure of ``verb`` as a ForgestateError, flags named as the parameters."""
        try:
            yield
        except OSError as e:
            raise BinaryNotFound(f"cannot run forgestate: {e}; set FORGESTATE_BIN or reinstall") from e
        except ValueError as e:  # a NUL or a lone surrogate in an argument of a `machine` verb
            raise DataError(f"an argument of {verb} cannot be passed to forgestate ({e})") from e
        except ForgestateError as e:
            names = {f"--{s.replace('_', '-')}": s for s in self._SETTINGS}
            raise reworded(e, {**names, **_verbs.FLAGS.get(verb, {})}) from e.__cause__


def _answer(verb: str, code: int, out: bytes, err: bytes) -> Mapping[str, Any]:
    tail: Deque[str] = collections.deque(maxlen=20)
    for line in err.decode("utf-8", "replace").splitlines():
        _log(line, tail)
    return _run.answer(verb, code, out, list(tail))


class Calls(_Transport):
    """How a :class:`~forgestate.Client` runs its verbs: one child per client and process,
    started on the first verb, one request at a time (a lock serialises threads)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _call(self, verb: str, args: Dict[str, Any]) -> Mapping[str, Any]:
        with self._failures(verb):
            if verb in _verbs.MACHINE:
                argv = self._machine(verb, args)
                done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                      env=self._env(), check=False)
                return _answer(verb, done.returncode, done.stdout, done.stderr)
            line = encode(verb, args)
            if self._lock_pid != os.getpid():
                # A fork: the parent's lock may be held by a thread that does not exist here.
                self._fresh_process_state()
            with self._lock:
                child = self._running()
                waits = child.exchange(verb, line)
                try:
                    while True:
                        fd, write = next(waits)
                        if fd is None:  # it ended: its exit code says why, if it comes in time
                            with contextlib.suppress(subprocess.TimeoutExpired):
                                child.proc.wait(timeout=2)
                        else:
                            select.select([] if write else [fd], [fd] if write else [], [])
                except StopIteration as done:
                    return read(verb, done.value)


class AsyncCalls(_Transport):
    """How an :class:`~forgestate.AsyncClient` runs its verbs: the same long-lived child, its
    pipes driven by the running event loop (which never waits on it), one request at a time."""

    def _new_lock(self) -> Any:
        return None  # an asyncio.Lock, made on the loop that first needs it

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Ends the child, if one runs (a later verb starts another)."""
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    async def _call(self, verb: str, args: Dict[str, Any]) -> Mapping[str, Any]:
        with self._failures(verb):
            if verb in _verbs.MACHINE:
                proc = await asyncio.create_subprocess_exec(
                    *self._machine(verb, args), stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self._env())
                out, err = await proc.communicate()
                return _answer(verb, proc.returncode or 0, out, err)
            line = encode(verb, args)
            self._lock = self._lock or asyncio.Lock()
            async with self._lock:
                # Starting (or ending) a process waits on the system: not on the loop.
                loop = asyncio.get_running_loop()
                child = await loop.run_in_executor(None, self._running)
                waits = child.exchange(verb, line)
                try:
                    while True:
                        fd, write = next(waits)
                        for _ in range(200 if fd is None else 0):
                            if child.proc.poll() is not None:
                                break
                            await asyncio.sleep(0.01)
                        if fd is not None:
                            await _ready(fd, write)
                except StopIteration as done:
                    return read(verb, done.value)


async def _ready(fd: int, write: bool) -> None:
    """Until ``fd`` can be written (or read), on the running loop."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    add, remove = (loop.add_writer, loop.remove_writer) if write else (loop.add_reader, loop.remove_reader)
    add(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        remove(fd)
