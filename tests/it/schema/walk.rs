//! Reading the verb table's JSON Schemas in tests: `$ref`s resolved against an answer's `$defs`,
//! the nested objects a schema leaves untyped, and a small validator of answers against their
//! schema (the draft 2020-12 keywords schemars writes; no dependency for it).

use std::collections::BTreeSet;

use serde_json::Value;

/// Where an answer may hold user data, an open object by design: how a path ends (paths are
/// written `verb.field.nested[]`, `[]` for an array's items).
pub const USER_DATA: &[&str] = &[
    // A checkpoint's state, as the agent wrote it (answers and records).
    ".data",
    // A health signal's metrics.
    ".metrics",
    // What a write-ahead intent needs to check the world.
    ".intent_data",
    // `history --diff`: the values before and after a change of a checkpoint's data.
    ".changes[].old",
    ".changes[].new",
    // `schema`: each verb's request and answer are themselves JSON Schemas.
    "schema.verbs[].request",
    "schema.verbs[].answer",
];

/// The schema `schema` names through `$ref` (`#/$defs/X`), followed in `root`; `schema` itself
/// when it is no reference.
pub fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut at = schema;
    for _ in 0..32 {
        let Some(reference) = at.get("$ref").and_then(Value::as_str) else {
            return at;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            panic!("unsupported $ref {reference}");
        };
        at = root
            .pointer(pointer)
            .unwrap_or_else(|| panic!("a dangling $ref {reference}"));
    }
    panic!("a $ref cycle at {schema}")
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

const SHAPES: &[&str] = &[
    "properties",
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
    "const",
    "items",
    "prefixItems",
];

/// Every path below `at` whose schema is an untyped object: typed "object" without
/// `properties` (or a schema for `additionalProperties`), or without any type or shape at all.
/// `seen` holds the `$defs` being walked, so a recursive type is walked once.
pub fn untyped(
    schema: &Value,
    root: &Value,
    at: &str,
    seen: &mut Vec<String>,
    out: &mut Vec<String>,
) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        if seen.iter().any(|s| s == reference) {
            return;
        }
        seen.push(reference.to_string());
        untyped(resolve(schema, root), root, at, seen, out);
        seen.pop();
        return;
    }
    let Some(map) = schema.as_object() else {
        if schema != &Value::Bool(false) {
            out.push(at.to_string());
        }
        return;
    };
    let ts = types(schema);
    let open_map = map
        .get("additionalProperties")
        .is_some_and(Value::is_object);
    let shaped = SHAPES.iter().any(|k| map.contains_key(*k));
    if (ts.contains(&"object") && !map.contains_key("properties") && !open_map)
        || (ts.is_empty() && !shaped)
    {
        out.push(at.to_string());
    }
    for (name, sub) in map
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        untyped(sub, root, &format!("{at}.{name}"), seen, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for sub in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            untyped(sub, root, at, seen, out);
        }
    }
    if let Some(items) = map.get("items") {
        untyped(items, root, &format!("{at}[]"), seen, out);
    }
    if let Some(extra) = map.get("additionalProperties").filter(|v| v.is_object()) {
        untyped(extra, root, &format!("{at}{{}}"), seen, out);
    }
}

/// Whether `path` is one of the documented user-data fields.
pub fn user_data(path: &str) -> bool {
    USER_DATA.iter().any(|end| path.ends_with(end))
}

/// What is wrong with `value` as an instance of `schema` (with `$defs` in `root`), each with its
/// path: a wrong type, a missing required property, a failed `const`/`enum`/`minimum`, and a key
/// the schema does not declare (the schema must describe every key that is written).
pub fn violations(schema: &Value, value: &Value, root: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, value, root, at, true, &mut out);
    out
}

fn is_type(kind: &str, v: &Value) -> bool {
    match kind {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        _ => false,
    }
}

/// Checks `v` against `schema`. `strict`: also report keys of an object that neither this
/// schema's `properties` nor its matching branches declare (off inside a branch of a schema
/// that has properties of its own, which declares the rest).
fn check(schema: &Value, v: &Value, root: &Value, at: &str, strict: bool, out: &mut Vec<String>) {
    let schema = resolve(schema, root);
    let Some(map) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            out.push(format!("{at}: nothing is allowed here"));
        }
        return;
    };
    let ts = types(schema);
    if !ts.is_empty() && !ts.iter().any(|t| is_type(t, v)) {
        out.push(format!("{at}: {v} is not {ts:?}"));
        return;
    }
    if let Some(c) = map.get("const").filter(|c| *c != v) {
        out.push(format!("{at}: {v} is not {c}"));
    }
    if let Some(options) = map.get("enum").and_then(Value::as_array)
        && !options.contains(v)
    {
        out.push(format!("{at}: {v} is none of {options:?}"));
    }
    if let (Some(min), Some(n)) = (map.get("minimum").and_then(Value::as_f64), v.as_f64())
        && n < min
    {
        out.push(format!("{at}: {n} is below {min}"));
    }
    let own = map.contains_key("properties");
    let branch_strict = strict && !own;
    let passes = |sub: &Value| {
        let mut errs = Vec::new();
        check(sub, v, root, at, branch_strict, &mut errs);
        errs
    };
    if let Some(all) = map.get("allOf").and_then(Value::as_array) {
        all.iter().for_each(|b| out.extend(passes(b)));
    }
    for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
        let Some(branches) = map.get(key).and_then(Value::as_array) else {
            continue;
        };
        let results: Vec<Vec<String>> = branches.iter().map(&passes).collect();
        let ok = results.iter().filter(|e| e.is_empty()).count();
        if ok == 0 || (exactly_one && ok > 1) {
            out.push(format!(
                "{at}: {ok} of the {key} branches match: {:?}",
                results.concat()
            ));
        }
    }
    if let Value::Array(items) = v
        && let Some(item) = map.get("items")
    {
        for (i, element) in items.iter().enumerate() {
            check(item, element, root, &format!("{at}[{i}]"), true, out);
        }
    }
    let Value::Object(object) = v else { return };
    let props = map.get("properties").and_then(Value::as_object);
    for name in map
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = name.as_str()
            && !object.contains_key(name)
        {
            out.push(format!("{at}: the required {name:?} is missing"));
        }
    }
    for (key, value) in object {
        if let Some(sub) = props.and_then(|p| p.get(key)) {
            check(sub, value, root, &format!("{at}.{key}"), true, out);
        } else if let Some(extra) = map.get("additionalProperties") {
            check(extra, value, root, &format!("{at}.{key}"), true, out);
        }
    }
    if strict && own {
        let declared = declared(schema, v, root);
        for key in object.keys().filter(|k| !declared.contains(*k)) {
            if map
                .get("additionalProperties")
                .is_none_or(|a| a == &Value::Bool(true))
            {
                out.push(format!("{at}.{key}: written, but not in the schema"));
            }
        }
    }
}

/// The property names `schema` declares for `v`: its own, and those of every `allOf` branch and
/// of the `anyOf`/`oneOf` branches `v` matches.
fn declared(schema: &Value, v: &Value, root: &Value) -> BTreeSet<String> {
    let schema = resolve(schema, root);
    let mut names: BTreeSet<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    for key in ["allOf", "anyOf", "oneOf"] {
        for sub in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let mut errs = Vec::new();
            check(sub, v, root, "", false, &mut errs);
            if key == "allOf" || errs.is_empty() {
                names.extend(declared(sub, v, root));
            }
        }
    }
    names
}
