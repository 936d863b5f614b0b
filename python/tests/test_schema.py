"""The Python face against the verb table: every field of a verb's answer has a dataclass
field, every verb marked for the ``python`` face has a :class:`~forgestate.Client` method, and
that method's parameters are exactly the fields of the verb's request.

The table comes from ``forgestate schema`` (one JSON Schema per verb's request and answer).
The answers the binary prints today are checked field by field without the table too
(``test_every_field_the_binary_answers_has_a_python_counterpart``).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import subprocess
import typing
from typing import Any, Dict, Iterator, List, Mapping, Optional, Set, Tuple

import pytest

from forgestate import Client, _run
from forgestate.answers import (
    Listing,
    Comment,
    History,
    Origin,
    Record,
    Rendered,
    Resume,
    ResumeMap,
    Saved,
    Status,
    StatusRow,
    Step,
    Change,
)

W = "implementation-worker"

#: Which dataclass holds each python-facing verb's answer. A tuple names the answer's property
#: whose items the dataclass describes (``list`` answers ``{"records": [...]}`` and
#: ``Client.list`` returns the records).
ANSWERS: Dict[str, Any] = {
    "checkpoint": Saved,
    "health": Saved,
    "end": Saved,
    "fork": Saved,
    "resume": Resume,
    "latest": ("record", Record),
    "parse": Record,
    "list": Listing,
    "render": Rendered,
    "resume-map": ResumeMap,
    "status": Status,
    "history": History,
}

#: Verbs whose answer Python hands back as a plain ``dict`` (nothing to compare field by field).
PLAIN: Set[str] = {"init", "flush", "publish", "export", "import", "prune"}


def schema_table() -> Dict[str, Any]:
    binary = _run.find_binary()
    done = subprocess.run([binary, "schema"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"forgestate schema failed: {done.stderr}"
    table = json.loads(done.stdout)
    assert isinstance(table.get("verbs"), list) and table["verbs"], table
    return table


# -- walking a JSON Schema ------------------------------------------------------------------


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, Mapping) and "$ref" in schema and seen < 32:
        ref = schema["$ref"]
        assert isinstance(ref, str) and ref.startswith("#/"), f"unsupported $ref {ref!r}"
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        schema = node
        seen += 1
    return schema


def _branches(schema: Any, root: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The schema and every `allOf`/`anyOf`/`oneOf` branch of it, resolved."""
    schema = _resolve(schema, root)
    if not isinstance(schema, Mapping):
        return
    yield schema
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            yield from _branches(sub, root)


def properties(schema: Any, root: Mapping[str, Any]) -> Dict[str, Any]:
    """Every property an object of this schema may have (union over its branches)."""
    found: Dict[str, Any] = {}
    for branch in _branches(schema, root):
        for name, sub in (branch.get("properties") or {}).items():
            found.setdefault(name, sub)
    return found


def items(schema: Any, root: Mapping[str, Any]) -> Any:
    for branch in _branches(schema, root):
        if "items" in branch:
            return branch["items"]
    return None


# -- the dataclass side ---------------------------------------------------------------------


def _dataclass_in(hint: Any) -> Tuple[Optional[type], bool]:
    """The dataclass a field's type holds, and whether it is a list of them."""
    if dataclasses.is_dataclass(hint):
        return hint, False
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (list, List):
        inner, _ = _dataclass_in(args[0]) if args else (None, False)
        return inner, True
    if origin is typing.Union:
        for arg in args:
            inner, many = _dataclass_in(arg)
            if inner is not None:
                return inner, many
    return None, False


#: Each ``(where, dataclass, how many properties its schema has)`` the last walks compared
#: (``missing_fields`` appends to it), so a test can tell the walk went below the top level.
VISITED: List[Tuple[str, str, int]] = []


def missing_fields(schema: Any, cls: type, root: Mapping[str, Any], where: str) -> List[str]:
    """`where.field` for each answer property `cls` has no field for, nested dataclasses
    included."""
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    missing: List[str] = []
    props = properties(schema, root)
    VISITED.append((where, cls.__name__, len(props)))
    for name, sub in props.items():
        if name not in fields:
            missing.append(f"{where}.{name} (no field on {cls.__name__})")
            continue
        inner, many = _dataclass_in(hints[name])
        if inner is None:
            continue
        target = items(sub, root) if many else sub
        if target is not None:
            missing += missing_fields(target, inner, root, f"{where}.{name}")
    return missing


def check_answer(verb: str, answer: Any, root: Mapping[str, Any]) -> List[str]:
    spec = ANSWERS[verb]
    if isinstance(spec, tuple):
        key, cls = spec
        props = properties(answer, root)
        fields = {f.name for f in dataclasses.fields(cls)}
        extra = [
            f"{verb}.{k} (Client.{verb} returns only {key})"
            for k in props
            if k != key and k not in fields
        ]
        assert key in props, f"{verb}'s answer has no {key!r}: {sorted(props)}"
        many = items(props[key], root)
        target = many if many is not None else props[key]
        where = f"{verb}.{key}[]" if many is not None else f"{verb}.{key}"
        return extra + missing_fields(target, cls, root, where)
    return missing_fields(answer, spec, root, verb)


# -- the tests ------------------------------------------------------------------------------


def python_verbs(table: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    return [v for v in table["verbs"] if "python" in (v.get("faces") or [])]


def test_every_answer_field_of_the_verb_table_has_a_dataclass_field(local_store):
    table = schema_table()
    verbs = python_verbs(table)
    assert verbs, "the verb table marks no verb for the python face"
    missing: List[str] = []
    for verb in verbs:
        name = verb["name"]
        if name in PLAIN:
            continue
        assert name in ANSWERS, f"no dataclass is named for {name!r}'s answer; add it to ANSWERS"
        answer = verb.get("answer")
        assert isinstance(answer, Mapping), f"{name} has no answer schema"
        # Sub-schemas ($defs) may sit in the answer schema or beside it at the table's root.
        root = {**table, **answer}
        missing += check_answer(name, answer, root)
    assert not missing, "answer fields with no Python counterpart:\n" + "\n".join(missing)


#: The nested answers the walk must reach with a typed schema (properties to compare), where a
#: Python dataclass mirrors them: ``(where, dataclass)``.
NESTED: List[Tuple[str, str]] = [
    ("checkpoint.record", "Record"),
    ("fork.record", "Record"),
    ("render.record", "Record"),
    ("resume.checkpoint", "Record"),
    ("resume.checkpoint.comment", "Comment"),
    ("latest.record", "Record"),
    ("latest.record.comment", "Comment"),
    ("list.records", "Record"),
    ("list.records.comment", "Comment"),
    ("status.rows", "StatusRow"),
    ("history.records", "Step"),
    ("history.records.changes", "Change"),
    ("history.records.forked_from", "Origin"),
    ("history.forked_from", "Origin"),
]


def test_the_walk_compares_the_nested_answers_field_by_field(local_store):
    # The Rust answers are typed all the way down: each nested dataclass is compared with a
    # schema that lists its properties (an untyped map there would compare nothing).
    table = schema_table()
    VISITED.clear()
    for verb in python_verbs(table):
        if verb["name"] in ANSWERS:
            check_answer(verb["name"], verb["answer"], {**table, **verb["answer"]})
    seen = {(where, cls): n for where, cls, n in VISITED}
    untyped = [f"{where} ({cls})" for where, cls in NESTED if not seen.get((where, cls))]
    assert not untyped, "nested answers with no typed schema to compare:\n" + "\n".join(untyped)


def test_a_field_added_to_a_nested_rust_type_needs_its_dataclass_field(local_store):
    # What the parity test says when a Rust answer gains a nested field Python lacks: the
    # comment of a listed record (`CommentInfo` in the answer's `$defs`) grows `colour`.
    table = schema_table()
    listing = copy.deepcopy(next(v for v in table["verbs"] if v["name"] == "list")["answer"])
    comment = _resolve(
        properties(items(properties(listing, listing)["records"], listing), listing)["comment"],
        listing,
    )
    comment["properties"]["colour"] = {"type": "string"}
    assert check_answer("list", listing, {**table, **listing}) == [
        "list.records.comment.colour (no field on Comment)"
    ]


def test_the_schema_walk_finds_a_missing_field_through_refs_branches_and_lists():
    # The shapes schemars writes: $defs and $ref, a flattened tagged enum as oneOf, Option as
    # anyOf with null, Vec as an array of a $ref.
    table = {
        "$defs": {
            "Entry": {
                "type": "object",
                "properties": {"agent": {"type": "string"}, "comment": {"$ref": "#/$defs/C"}},
                "oneOf": [
                    {"properties": {"kind": {"const": "checkpoint"}, "phase": {}}},
                    {"properties": {"kind": {"const": "health"}, "mood": {}}},
                ],
            },
            "C": {"type": "object", "properties": {"id": {}, "colour": {}}},
            "Row": {"type": "object", "properties": {"agent": {}, "verdict": {}, "sparkle": {}}},
        }
    }
    latest = {"properties": {"record": {"anyOf": [{"$ref": "#/$defs/Entry"}, {"type": "null"}]},
                             "warnings": {}}}
    assert sorted(check_answer("latest", latest, table)) == [
        "latest.record.comment.colour (no field on Comment)",
        "latest.record.mood (no field on Record)",
    ]
    status = {"properties": {"rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}},
                             "now": {}, "offline": {}, "warnings": {}}}
    assert check_answer("status", status, table) == [
        "status.rows.sparkle (no field on StatusRow)"
    ]
    listing = {"properties": {"records": {"items": {"$ref": "#/$defs/Entry"}}, "total": {}}}
    assert "list.total (no field on Listing)" in check_answer("list", listing, table)
    only = {"properties": {"record": {"$ref": "#/$defs/Entry"}, "total": {}}}
    assert "latest.total (Client.latest returns only record)" in check_answer("latest", only, table)


def test_every_python_facing_verb_has_a_client_method(local_store):
    table = schema_table()
    lacking = [
        v["name"]
        for v in python_verbs(table)
        if not callable(getattr(Client, v["name"].replace("-", "_"), None))
    ]
    assert not lacking, f"verbs for the python face with no Client method: {lacking}"


#: Client parameters named otherwise than their request fields: ``from`` is a Python keyword,
#: and a Python caller gives a duration as an age (``"10m"``) or seconds, which the request
#: takes in its ``*_secs`` field.
RENAMED: Dict[str, str] = {
    "from_": "from",
    "warn_after": "warn_after_secs",
    "stalled_after": "stalled_after_secs",
}

#: Verbs whose Client method is named otherwise: ``listing`` returns ``list``'s whole answer
#: (``Client.list`` only its records, with the same parameters less ``invalid`` and ``all``).
METHODS: Dict[str, str] = {"list": "listing", "import": "import_"}

#: Verbs whose Client method takes the whole request as one mapping, by this parameter.
WHOLE: Dict[str, str] = {"render": "record"}

#: Python-facing verbs that ``forgestate call`` does not run yet (the library does not): their
#: Client method runs ``forgestate --json VERB`` once, with no request to compare.
NOT_CALLED: Set[str] = {"flush"}


def test_every_client_method_takes_exactly_its_verbs_request_fields(local_store):
    table = schema_table()
    wrong: List[str] = []
    for verb in python_verbs(table):
        name = verb["name"]
        if name in NOT_CALLED:
            continue
        method = getattr(Client, METHODS.get(name, name.replace("-", "_")))
        params = [p for p in inspect.signature(method).parameters if p != "self"]
        if name in WHOLE:
            if params != [WHOLE[name]]:
                wrong.append(f"{name}: Client takes {params}, not the one mapping {WHOLE[name]}")
            continue
        request = verb.get("request")
        assert isinstance(request, Mapping), f"{name} has no request schema"
        fields = set(properties(request, {**table, **request}))
        given = {RENAMED.get(p, p) for p in params}
        for field in sorted(fields - given):
            wrong.append(f"{name}.{field}: a request field no Client parameter sets")
        for param in sorted(given - fields):
            wrong.append(f"{name}: Client parameter {param} is no field of the request")
    assert not wrong, "Client methods and verb requests disagree:\n" + "\n".join(wrong)
    lister = [p for p in inspect.signature(Client.list).parameters if p != "self"]
    listing = [p for p in inspect.signature(Client.listing).parameters if p != "self"]
    assert set(listing) - set(lister) == {"invalid", "all"}


def test_the_not_called_verbs_are_refused_by_forgestate_call(tmp_path):
    # When the library runs one of them, `forgestate call` takes it: move it out of NOT_CALLED
    # and let its Client method send its request.
    for name in NOT_CALLED:
        done = subprocess.run(
            [_run.find_binary(), "--store", str(tmp_path / "st"), "call", "--lines"],
            input=json.dumps({"verb": name, "args": {}}) + "\n",
            capture_output=True, text=True, check=False,
        )
        answer = json.loads(done.stdout)
        assert answer.get("error", {}).get("code") == 64, answer
        assert f"forgestate --json {name}" in answer["error"]["message"], answer


# The same comparison without the table: the JSON documents the binary prints today.


def keys_without_field(doc: Any, cls: type, where: str) -> List[str]:
    if not isinstance(doc, Mapping):
        return []
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    missing: List[str] = []
    for key, value in doc.items():
        if key not in fields:
            missing.append(f"{where}.{key} (no field on {cls.__name__})")
            continue
        inner, many = _dataclass_in(hints[key])
        if inner is None:
            continue
        for i, element in enumerate(value if many and isinstance(value, list) else [value]):
            missing += keys_without_field(element, inner, f"{where}.{key}")
    return missing


def raw(client: Client, argv: List[str], stdin: Optional[str] = None) -> Any:
    return _run.run(_run.find_binary(), [*argv, *client._argv()], stdin=stdin).doc


def test_every_field_the_binary_answers_has_a_python_counterpart(tmp_path):
    c = Client.local(tmp_path / "store")
    context = tmp_path / "context.md"
    context.write_text("plan\n")
    c.checkpoint(W, "s1", "clone_complete", {"a": 1}, next="n", blockers=["b"],
                 context_file=context)
    c.health(W, "s1", {"load": 1}, next_check="soon")
    first = c.checkpoint(W, "s1", "subtask_1_complete", {"a": 2})
    fork = raw(c, ["fork", "--session", "s1", "--new-session", "s2"])
    docs = {
        "checkpoint": (raw(c, ["checkpoint", "--agent", W, "--session", "s1", "--phase", "p",
                               "--next", "n", "--blocker", "b", "--data", "-"], '{"k": "v"}'),
                       Saved),
        "fork": (fork, Saved),
        "resume": (raw(c, ["resume", "--agent", W, "--session", "s1", "--context-file",
                           str(context)]), Resume),
        "latest": (raw(c, ["latest", "--agent", W])["record"], Record),
        "render": (raw(c, ["render", "-"], json.dumps({"agent": W, "session": "s", "phase": "p",
                                                       "data": {"password": "x"}})), Rendered),
        "resume-map": (raw(c, ["resume-map"]), ResumeMap),
        "history": (raw(c, ["history", "--session", "s2", "--diff"]), History),
        "history s1": (raw(c, ["history", "--session", "s1", "--diff"]), History),
    }
    status = raw(c, ["status"])
    rows = status if isinstance(status, list) else status.get("rows")
    assert rows, status
    missing: List[str] = []
    if isinstance(status, Mapping):
        missing += keys_without_field(status, Status, "status")
    for row in rows:
        missing += keys_without_field(row, StatusRow, "status.rows")
    missing += keys_without_field(raw(c, ["list", "--invalid"]), Listing, "list")
    for name, (doc, cls) in docs.items():
        assert doc, f"{name} answered nothing"
        missing += keys_without_field(doc, cls, name)
    assert not missing, "answer fields with no Python counterpart:\n" + "\n".join(missing)
    # The walk reached the nested answers it should have checked.
    assert docs["history"][0]["forked_from"]["record_id"] == first.id
    assert docs["history s1"][0]["records"][2]["changes"]
    assert "context_drift" in docs["resume"][0]
    for nested in (Comment, Origin, Step, Change):
        assert dataclasses.is_dataclass(nested)
