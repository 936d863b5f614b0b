"""Finding the bundled ``forgestate`` binary, JSON with integers of any size, and what one run
of ``forgestate --json VERB`` (a verb the long-lived child does not run) answered."""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import uuid
from pathlib import Path
from typing import Any, List, Mapping

from .errors import BinaryNotFound, StorageError, error_for

EXE = "forgestate.exe" if os.name == "nt" else "forgestate"


def find_binary() -> str:
    """The ``forgestate`` binary: ``$FORGESTATE_BIN``, else the one pip installed beside this
    interpreter's scripts (the wheel's), else the first on ``PATH``."""
    explicit = os.environ.get("FORGESTATE_BIN")
    if explicit:
        return explicit
    user = f"{os.name}_user"
    dirs = [sysconfig.get_path("scripts")]
    dirs += [sysconfig.get_path("scripts", user)] if user in sysconfig.get_scheme_names() else []
    # A venv's interpreter may be a symlink: look beside sys.executable too.
    for scripts in [*dirs, str(Path(sys.executable).parent)]:
        candidate = Path(scripts or ".") / EXE
        if scripts and candidate.is_file() and os.access(candidate, os.X_OK):
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
    """The JSON document in ``text``, its integers read whole however long they are: CPython's
    ``int()`` refuses over ``sys.get_int_max_str_digits()`` digits, so long ones are read in
    pieces (the process-wide limit is never lifted)."""
    return json.loads(text, parse_int=_parse_int)


def _parse_int(text: str) -> int:
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if not limit or len(text) <= limit:
        return int(text)
    if text.startswith("-"):
        return -_parse_int(text[1:])
    low = len(text) // 2
    return _parse_int(text[:-low]) * 10**low + _parse_int(text[-low:])


def _plain(value: Any) -> Any:
    """A path as its text (JSON has no paths)."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)``, its integers written whole however long they are (the
    other half of :func:`loads`), paths as their text."""
    options.setdefault("default", _plain)
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
    width = n.bit_length() * 30103 // 100000 + 1  # at least its count of digits
    if width <= limit:
        return str(n)
    high, low = divmod(n, 10 ** (width // 2))
    return _decimal(high) + _decimal(low).zfill(width // 2)


def flags(verb_flags: Mapping[str, str], args: Mapping[str, Any]) -> List[str]:
    """The command line of a request: ``--flag`` for a true switch, ``--flag=VALUE`` once per
    item of a list, else once."""
    argv: List[str] = []
    for name, value in args.items():
        flag = verb_flags.get(name)
        if value is None or value is False or flag is None:
            continue
        if value is True:
            argv.append(flag)
        else:
            values = value if isinstance(value, (list, tuple)) else [value]
            argv += [f"{flag}={os.fspath(v) if isinstance(v, os.PathLike) else v}" for v in values]
    return argv


def document(verb: str, text: bytes) -> Any:
    """The JSON document forgestate answered ``verb`` with; an error in it is raised, typed."""
    try:
        doc = loads(text.decode("utf-8", "replace"))
    except ValueError as e:
        # An answer read as nothing would be a blank answer (a fresh start from `resume`).
        raise StorageError(
            f"forgestate answered {verb} with JSON this package cannot read ({e}); nothing was "
            "assumed from it. Run the verb with the CLI and --json to see the answer, and report this"
        ) from e
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        code = error.get("code")
        raise error_for(code if isinstance(code, int) else 74, error["message"], error.get("reason"))
    return doc


def answer(verb: str, code: int, out: bytes, stderr: List[str]) -> Mapping[str, Any]:
    """What ``forgestate --json VERB`` answered (exit ``code``, stdout ``out``), or the typed
    error it exited with."""
    doc = document(verb, out) if out.strip() else None
    if code == 0 and isinstance(doc, dict):
        return doc
    last = next((line for line in reversed(stderr) if line.strip()), "")
    message = f"forgestate was killed by signal {-code}" if code < 0 else (
        last or f"forgestate exited with code {code} and no message")
    raise error_for(code if code in (64, 65, 73, 75, 78) else 74, message)
