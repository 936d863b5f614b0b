"""Finding the bundled ``forgestate`` binary, JSON with integers of any size, and running the
binary once (``forgestate --json VERB``) for the verbs ``forgestate call`` does not run yet.

Every behaviour (the format, the forge client, the outbox, trust, redaction) is the binary's;
the verbs go through the long-lived ``forgestate call --lines`` child (``_child.py``), and
Python only builds the verb's JSON request and maps its answer or error.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from .errors import BinaryNotFound, DataError, StorageError, error_for

log = logging.getLogger("forgestate")

EXE = "forgestate.exe" if os.name == "nt" else "forgestate"


def find_binary() -> str:
    """The ``forgestate`` binary: ``$FORGESTATE_BIN``, else the one pip installed beside this
    interpreter's scripts (the wheel's), else the first on ``PATH``."""
    explicit = os.environ.get("FORGESTATE_BIN")
    if explicit:
        return explicit
    schemes = [None]
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        schemes.append(user_scheme)
    for scheme in schemes:
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if scripts:
            candidate = Path(scripts) / EXE
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    # A venv's interpreter may be a symlink: look beside sys.executable too.
    candidate = Path(sys.executable).parent / EXE
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which("forgestate")
    if found:
        return found
    raise BinaryNotFound(
        "the forgestate binary was not found beside this Python's scripts "
        f"({sysconfig.get_path('scripts')}) or on PATH; reinstall the package "
        "(pip install forgestate) or set FORGESTATE_BIN to the binary"
    )


def loads(text: str) -> Any:
    """The JSON document in ``text``, its integers read whole however long they are.

    The record format keeps integers of any size, and so does the binary; CPython's ``int()``
    refuses a decimal string over ``sys.get_int_max_str_digits()`` digits (4,300 by default),
    which made ``json.loads`` refuse the whole answer. Long digit strings are converted in
    pieces under the limit instead; the process-wide limit is never lifted (other threads may
    rely on it)."""
    return json.loads(text, parse_int=_parse_int)


def _parse_int(text: str) -> int:
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if not limit or len(text) <= limit:
        return int(text)
    if text.startswith("-"):
        return -_digits(text[1:], limit)
    return _digits(text, limit)


def _digits(digits: str, limit: int) -> int:
    """The value of a run of decimal digits, split in halves until each is under ``limit``
    (``10**n`` is computed, not parsed, so no piece meets the limit)."""
    if len(digits) <= limit:
        return int(digits)
    low = len(digits) // 2
    return _digits(digits[:-low], limit) * 10**low + _digits(digits[-low:], limit)


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)``, its integers written whole however long they are (the
    other half of :func:`loads`: a resumed 5,000-digit integer can be saved again)."""
    try:
        return json.dumps(value, **options)
    except ValueError:
        pass  # perhaps an integer over the limit (or a NaN): written below, in pieces
    token = f"forgestate-int-{uuid.uuid4().hex}-"
    long: List[str] = []

    def swap(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [swap(x) for x in v]
        if isinstance(v, int) and not isinstance(v, bool):
            try:
                int.__repr__(v)
            except ValueError:
                long.append(_decimal(v))
                return f"{token}{len(long) - 1}"
        return v

    text = json.dumps(swap(value), **options)
    for i, digits in enumerate(long):
        text = text.replace(f'"{token}{i}"', digits, 1)
    return text


def _decimal(n: int) -> str:
    """The decimal digits of ``n``, written in halves under the int-conversion limit."""
    if n < 0:
        return "-" + _decimal(-n)
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)() or 4300

    def digits(m: int, width: int) -> str:
        if width <= limit:
            return str(m).zfill(width)
        low = width // 2
        high, rest = divmod(m, 10**low)
        return digits(high, width - low) + digits(rest, low)

    width = 1
    while 10**width <= n:
        width *= 2
    return digits(n, width).lstrip("0") or "0"


class Answer:
    """One run of the binary: its JSON document, exit code and stderr lines."""

    def __init__(self, doc: Any, code: int, stderr: List[str]) -> None:
        self.doc = doc
        self.code = code
        self.stderr = stderr

    @property
    def warnings(self) -> List[str]:
        """The ``forgestate: warning:`` lines, without their prefix."""
        prefix = "forgestate: warning: "
        return [line[len(prefix):] for line in self.stderr if line.startswith(prefix)]


def run(
    binary: str,
    argv: Sequence[str],
    *,
    stdin: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    ok_codes: Tuple[int, ...] = (0,),
) -> Answer:
    """Runs ``binary --json ARGV`` and returns its answer, or raises the typed error its
    exit code and error document name. Exit codes in ``ok_codes`` are answers, not errors."""
    cmd = [binary, "--json", *argv]
    try:
        data = stdin.encode("utf-8") if stdin is not None else None
    except UnicodeEncodeError as e:
        raise DataError(
            f"the input is not valid Unicode text ({e.reason} at character {e.start}); "
            "pass text that can be written as UTF-8"
        ) from e
    try:
        done = subprocess.run(
            cmd,
            input=data,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            check=False,
        )
    except ValueError as e:
        # An argument holding a NUL or a lone surrogate cannot reach the command at all.
        raise DataError(
            f"an argument cannot be passed to forgestate ({e}); "
            "names and values must be text without NUL characters or lone surrogates"
        ) from e
    except OSError as e:
        raise BinaryNotFound(f"cannot run {binary}: {e}; set FORGESTATE_BIN or reinstall") from e
    stderr = done.stderr.decode("utf-8", "replace").splitlines()
    # Warnings (a record spooled, an answer from the outbox) reach the `forgestate` logger; an
    # error line is the message of the exception raised below, so it is only logged at debug.
    for line in stderr:
        if line.startswith("forgestate: warning:"):
            log.warning("%s", line)
        else:
            log.debug("%s", line)
    text = done.stdout.decode("utf-8", "replace")
    unreadable: Optional[ValueError] = None
    try:
        doc = loads(text) if text.strip() else None
    except ValueError as e:
        doc, unreadable = None, e
    error = doc.get("error") if isinstance(doc, dict) else None
    if done.returncode in ok_codes and not (done.returncode != 0 and error):
        if unreadable is not None:
            # An answer read as nothing would be a blank answer (a fresh start from `resume`).
            raise StorageError(
                f"forgestate answered {' '.join(argv[:1])} with JSON this package cannot read "
                f"({unreadable}); nothing was assumed from it. Run the command with --json to "
                "see the answer, and report this"
            )
        return Answer(doc, done.returncode, stderr)
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        code = int(error.get("code") or done.returncode)
        raise error_for(code, error["message"], error.get("reason"))
    last = next((l for l in reversed(stderr) if l.strip()), "")
    if done.returncode < 0:
        message = f"forgestate was killed by signal {-done.returncode}"
    else:
        message = last or f"forgestate exited with code {done.returncode} and no message"
    if done.returncode in (64, 65, 74, 75, 78):
        raise error_for(done.returncode, message)
    raise StorageError(message, code=done.returncode)
