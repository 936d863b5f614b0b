//! Plain request schemas, as every MCP client reads them, and the lenient reading of arguments
//! such clients send.
//!
//! schemars writes an optional field as "integer or null" with a Rust format (`uint`, `uint64`).
//! Clients built on the official SDKs (the MCP Inspector, say) take "or null" for a union to
//! choose from, send a number typed in a form as the string `"1"`, and warn of each format they
//! do not know. So a request schema says what a caller may send: an optional property is left
//! out of `required` and typed by its value alone, no integer format is named, and an integer
//! argument sent as a numeric string is read as the number (as `data` already takes JSON text),
//! and a duration in seconds (`*_secs`) sent as an age (`"10m"`) as its seconds.

use serde_json::{Map, Value};

/// Makes a request schema plain: no `null` in the type of a property that is not required, and
/// no integer `format`, at any depth.
pub(super) fn request(schema: &mut Map<String, Value>) {
    strip_formats(schema);
    let required: Vec<String> = schema
        .get("required")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name)
                && let Value::Object(prop) = prop
            {
                drop_null(prop);
            }
        }
    }
}

/// Makes an answer schema plain: no integer `format` (an answer's `null`s are real, and stay).
pub(super) fn answer(schema: &mut Map<String, Value>) {
    strip_formats(schema);
}

/// Removes `"format": "int…"`/`"uint…"` (Rust's integer widths, unknown to JSON Schema).
fn strip_formats(map: &mut Map<String, Value>) {
    let rust_int = map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"));
    if rust_int {
        map.remove("format");
    }
    for value in map.values_mut() {
        match value {
            Value::Object(inner) => strip_formats(inner),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        strip_formats(inner);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `"type": ["integer", "null"]` becomes `"type": "integer"`; an `anyOf` holding `{"type":
/// "null"}` loses it (and becomes its one other branch when that is all that is left).
fn drop_null(prop: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = prop.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            prop.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(branches)) = prop.get_mut("anyOf") {
        branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
        if branches.len() == 1
            && let Some(Value::Object(only)) = branches.pop()
        {
            prop.remove("anyOf");
            for (k, v) in only {
                prop.entry(k).or_insert(v);
            }
        }
    }
}

/// `args` with each string given for an integer property (by `schema`) that reads as an
/// integer replaced by that number (for a `*_secs` property, an age such as "10m" too), and `"true"`/`"false"` for a boolean one by the boolean.
/// Anything else is left for the request's own decoding to accept or refuse.
pub(super) fn lenient(args: Value, schema: &Map<String, Value>) -> Value {
    let Value::Object(mut args) = args else {
        return args;
    };
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Value::Object(args);
    };
    for (name, value) in args.iter_mut() {
        let Value::String(text) = value else {
            continue;
        };
        let Some(prop) = props.get(name) else {
            continue;
        };
        // Surrounding whitespace is refused, as the CLI's flags refuse it (`--limit " 1"`).
        if text.trim() != text {
            continue;
        }
        let text = text.as_str();
        if typed(prop, "integer") {
            if let Ok(n) = text.parse::<u64>() {
                *value = Value::from(n);
            } else if let Ok(n) = text.parse::<i64>() {
                *value = Value::from(n);
            } else if let Some(secs) = name
                .ends_with("_secs")
                .then(|| super::input::parse_age(text))
                .flatten()
            {
                // A duration in seconds may be given as an age, as its CLI flag takes it.
                *value = Value::from(secs);
            }
        } else if typed(prop, "boolean") {
            match text {
                "true" => *value = Value::Bool(true),
                "false" => *value = Value::Bool(false),
                _ => {}
            }
        }
    }
    Value::Object(args)
}

/// Whether a property's schema allows `kind` (its `type`, or one of its `anyOf` branches').
fn typed(prop: &Value, kind: &str) -> bool {
    let of = |v: &Value| match v.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == kind),
        _ => false,
    };
    of(prop)
        || prop
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().any(of))
}
