"""The Python face against the verb table (``forgestate schema``), for :class:`Client` and
:class:`AsyncClient` alike: one method per verb of the ``python`` face, whose parameters are
the request's fields with the schema's types and defaults (positional where the table says so),
answering a dataclass that has a field, of the schema's type, for every property of the answer,
nested types included. No verb name is spelled here: the table names them.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import keyword
import subprocess
import typing
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional

import pytest

import forgestate
from forgestate import AsyncClient, Client, UsageError, _run

W = "implementation-worker"


def schema_table() -> Dict[str, Any]:
    done = subprocess.run([_run.find_binary(), "schema"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, f"forgestate schema failed: {done.stderr}"
    return json.loads(done.stdout)


def python_verbs() -> List[Mapping[str, Any]]:
    verbs = [v for v in schema_table()["verbs"] if "python" in v["faces"]]
    assert len(verbs) >= 18, [v["name"] for v in verbs]
    return verbs


def ident(name: str) -> str:
    name = name.replace("-", "_")
    return f"{name}_" if keyword.iskeyword(name) else name


def resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    while isinstance(schema, Mapping) and "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def branches(schema: Any, root: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    schema = resolve(schema, root)
    if isinstance(schema, Mapping):
        yield schema
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in schema.get(key) or []:
                yield from branches(sub, root)


def properties(schema: Any, root: Mapping[str, Any]) -> Dict[str, Any]:
    found: Dict[str, Any] = {}
    for branch in branches(schema, root):
        for name, sub in (branch.get("properties") or {}).items():
            found.setdefault(name, sub)
    return found


#: A JSON Schema type and the Python type a value of it is.
PYTHON = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict,
          "array": list}


def json_types(schema: Any, root: Mapping[str, Any]) -> List[str]:
    """The JSON types a value of ``schema`` may have (``[]``: any)."""
    found: List[str] = []
    for branch in branches(schema, root):
        t = branch.get("type")
        found += [t] if isinstance(t, str) else list(t or [])
        if "const" in branch or "enum" in branch:
            found.append("string")
        if branch.get("properties"):
            found.append("object")
    return sorted(set(found))


def hint_types(hint: Any) -> List[Any]:
    """The plain types a hint stands for (``Optional[List[str]]`` is ``[list, None]``)."""
    if hint is Any:
        return []
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return sorted({t for a in typing.get_args(hint) for t in hint_types(a) or [object]},
                      key=str)
    if hint is type(None):
        return [None]
    if dataclasses.is_dataclass(hint):
        return [dict]
    return [origin or hint]


def same_type(schema: Any, hint: Any, root: Mapping[str, Any]) -> bool:
    want = json_types(schema, root)
    if not want or set(want) >= {"string", "integer", "boolean", "object", "array"}:
        return hint_types(hint) in ([], [object])
    expected = sorted({PYTHON.get(t) for t in want}, key=str)
    got = hint_types(hint)
    # A field the answer may leave out is Optional although its schema has no null.
    return got == expected or [t for t in got if t is not None] == expected


def dataclass_in(hint: Any) -> Optional[type]:
    if dataclasses.is_dataclass(hint):
        return hint
    for arg in typing.get_args(hint):
        inner = dataclass_in(arg)
        if inner is not None:
            return inner
    return None


def mismatches(schema: Any, cls: type, root: Mapping[str, Any], where: str,
               seen: List[str]) -> List[str]:
    """Each answer property ``cls`` has no field for, or a field of another type, nested
    dataclasses included."""
    seen.append(cls.__name__)
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    wrong: List[str] = []
    for name, sub in properties(schema, root).items():
        field = ident(name)
        if field not in fields:
            wrong.append(f"{where}.{name}: no field on {cls.__name__}")
            continue
        if not same_type(sub, hints[field], root):
            wrong.append(f"{where}.{name}: {hints[field]} for {json_types(sub, root)}")
        inner = dataclass_in(hints[field])
        if inner is not None and inner.__name__ not in seen:
            target = sub
            for branch in branches(sub, root):
                target = branch.get("items", target) if branch.get("type") == "array" else target
            wrong += mismatches(target, inner, root, f"{where}.{name}", seen)
    return wrong


CLIENTS = [Client, AsyncClient]


@pytest.mark.parametrize("cls", CLIENTS, ids=lambda c: c.__name__)
def test_each_verb_is_a_method_with_its_request_fields_types_and_defaults(cls):
    wrong: List[str] = []
    for verb in python_verbs():
        method = getattr(cls, ident(verb["name"]), None)
        if method is None:
            wrong.append(f"{cls.__name__} has no method for {verb['name']}")
            continue
        assert inspect.iscoroutinefunction(method) == (cls is AsyncClient), verb["name"]
        request = verb["request"]
        params = dict(inspect.signature(method).parameters)
        params.pop("self")
        hints = typing.get_type_hints(method)
        fields = properties(request, request)
        if sorted(params) != sorted(ident(f) for f in fields):
            wrong.append(f"{verb['name']}: {sorted(params)} for {sorted(fields)}")
            continue
        in_order = [p for p, v in params.items() if v.kind is v.POSITIONAL_OR_KEYWORD]
        if in_order != [ident(f) for f in verb["positional"]]:
            wrong.append(f"{verb['name']}: positional {in_order}, the table {verb['positional']}")
        for name, sub in fields.items():
            param = params[ident(name)]
            required = name in (request.get("required") or [])
            default = resolve(sub, request).get("default", sub.get("default"))
            if required and param.default is not param.empty:
                wrong.append(f"{verb['name']}.{name}: required, but defaults to {param.default!r}")
            if not required and param.default != default:
                wrong.append(f"{verb['name']}.{name}: defaults to {param.default!r}, the "
                             f"table to {default!r}")
            if not same_type(sub, hints[ident(name)], request):
                wrong.append(f"{verb['name']}.{name}: {hints[ident(name)]} for "
                             f"{json_types(sub, request)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("cls", CLIENTS, ids=lambda c: c.__name__)
def test_each_verb_answers_a_dataclass_with_every_field_of_its_answer(cls):
    wrong: List[str] = []
    seen: List[str] = []
    for verb in python_verbs():
        answer = typing.get_type_hints(getattr(cls, ident(verb["name"])))["return"]
        if not dataclasses.is_dataclass(answer):
            wrong.append(f"{verb['name']} answers {answer}, not a dataclass")
            continue
        wrong += mismatches(verb["answer"], answer, verb["answer"], verb["name"], seen)
    assert not wrong, "\n".join(wrong)
    # The walk went below the answers: the nested types were compared too.
    assert {"Entry", "CommentInfo", "Step", "Change", "Origin", "StatusRow"} <= set(seen), seen


@dataclasses.dataclass
class Inner:
    a: str = ""


@dataclasses.dataclass
class Outer:
    items: List[Inner] = dataclasses.field(default_factory=list)
    n: int = 0


def test_the_walk_finds_a_missing_or_mistyped_field():
    root = {"$defs": {"Inner": {"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}}}
    schema = {"properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Inner"}},
                             "n": {"type": "string"}}}
    assert mismatches(schema, Outer, root, "x", []) == [
        "x.items.b: no field on Inner", "x.n: <class 'int'> for ['string']"]


def test_every_answer_type_is_exported():
    for verb in python_verbs():
        answer = typing.get_type_hints(getattr(Client, ident(verb["name"])))["return"]
        assert getattr(forgestate, answer.__name__) is answer


# -- the drifts of hand-kept Python (issue #41) ------------------------------------------------


def test_flush_takes_all_and_from(tmp_path):
    c = Client.local(tmp_path / "store")
    assert c.flush(all=True).left == 0
    # `from` reaches the binary, which names it as the parameter.
    with pytest.raises(forgestate.ConfigError, match=r"^from_ .*not an outbox directory"):
        c.flush(from_=tmp_path)


def test_no_default_is_restated_in_python():
    """The methods, and so their defaults, are only in the generated file: no hand-kept module
    defines a verb, so none restates a default (the parity test above compares each default of
    the generated methods with the table's)."""
    import forgestate._child
    import forgestate._run
    import forgestate.client
    import forgestate.errors

    verbs = {ident(v["name"]) for v in python_verbs()}
    for module in (forgestate, forgestate.client, forgestate._child, forgestate._run,
                   forgestate.errors):
        tree = ast.parse(inspect.getsource(module))
        defined = {n.name for n in ast.walk(tree)
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert not defined & verbs, f"{module.__name__} defines {sorted(defined & verbs)}"
    # The three: each the table's own default, taken from it.
    table = {v["name"]: properties(v["request"], v["request"]) for v in python_verbs()}
    for verb, field in (("health", "status"), ("prune", "keep"), ("resume-map", "agent")):
        method = getattr(Client, ident(verb))
        assert inspect.signature(method).parameters[field].default == table[verb][field]["default"]


def test_the_hand_kept_python_is_at_most_a_thousand_lines():
    """Issue #41: what is Python's own (the transport, errors, settings, the seed drop-in) stays
    small; every verb, default and answer type is generated. The LangGraph saver is apart."""
    package = Path(forgestate.__file__).parent
    kept = ("__init__.py", "_child.py", "_run.py", "client.py", "errors.py", "session_state.py")
    lines = sum(len((package / name).read_text().splitlines()) for name in kept)
    assert lines <= 1000, f"the hand-kept Python is {lines} lines"
    generated = {p.name for p in package.glob("*.py")} - set(kept) - {"langgraph.py"}
    assert generated == {"_verbs.py"} and "@generated" in (package / "_verbs.py").read_text()


def test_lineage_and_the_intent_check_are_the_librarys(tmp_path):
    c = Client.local(tmp_path / "store")
    first = c.checkpoint(W, "s1", "clone_complete")
    second = c.checkpoint(W, "s1", "subtask_1_complete")
    assert second.record.parent == first.id
    assert not [k for k in vars(c) if "known" in k], "Python keeps no lineage of its own"
    with pytest.raises(UsageError, match="intent_data needs an intent"):
        c.checkpoint(W, "s1", "p", intent_data={"a": 1})
