//! Plain request schemas and the lenient reading of arguments, through the library's public API
//! (`request_schema`, `decode`): an optional property is typed by its value alone (no `null`)
//! and names no Rust integer format, while a required one keeps its type; an integer or boolean
//! sent as text is read as the value, a `*_secs` duration as an age too, and anything else is
//! left for the request's decoding to refuse.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use forgestate::verbs::{ListVerb, StatusVerb, decode, request_schema};

/// A request with a required nullable field, optional ones and a time.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // read by its schema only
struct Sample {
    /// Required.
    #[schemars(required)]
    name: Option<String>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    at: Option<Nested>,
    #[serde(default)]
    since: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // read by its schema only
struct Nested {
    n: u64,
}

#[test]
fn optional_properties_lose_null_and_formats() {
    let schema = Value::Object(request_schema::<Sample>());
    let p = &schema["properties"];
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let raw = serde_json::to_value(generator.into_root_schema_for::<Sample>()).unwrap();
    assert_eq!(
        p["name"], raw["properties"]["name"],
        "required: kept as schemars wrote it"
    );
    // What schemars writes, and plain changes: "or null" and a Rust format.
    assert_eq!(
        raw["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
    assert!(raw["properties"]["limit"]["format"].is_string(), "{raw}");
    assert!(raw["properties"]["at"]["anyOf"].is_array(), "{raw}");
    assert_eq!(p["limit"]["type"], "integer", "{schema}");
    assert!(p["limit"].get("format").is_none(), "{schema}");
    assert_eq!(p["at"]["$ref"], "#/$defs/Nested", "{schema}");
    assert!(p["at"].get("anyOf").is_none(), "{schema}");
    assert!(
        schema["$defs"]["Nested"]["properties"]["n"]
            .get("format")
            .is_none()
    );
    assert_eq!(p["since"]["format"], "date-time", "only integer formats go");
    assert_eq!(p["since"]["type"], "string", "{schema}");
}

#[test]
fn numeric_strings_are_read_as_numbers_for_integer_properties_only() {
    let list = decode::<ListVerb>(json!({"limit": "1", "invalid": "true", "agent": "7"}))
        .expect("read leniently");
    for spaced in [" 1", "1 ", "\t1"] {
        assert!(
            decode::<ListVerb>(json!({"limit": spaced})).is_err(),
            "spaces around a number are refused, as the CLI's --limit refuses them: {spaced:?}"
        );
    }
    assert!(decode::<ListVerb>(json!({"invalid": " true"})).is_err());
    assert_eq!(list.limit, Some(1));
    assert!(list.invalid);
    assert_eq!(
        list.filter.agent.as_deref(),
        Some("7"),
        "a string stays one"
    );
    let status = decode::<StatusVerb>(json!({"warn_after_secs": "1h 30m"})).expect("an age");
    assert_eq!(status.warn_after_secs, Some(5400));
    assert!(decode::<StatusVerb>(json!({"warn_after_secs": "soon"})).is_err());
    assert!(
        decode::<ListVerb>(json!({"limit": "10m"})).is_err(),
        "only a *_secs property takes an age"
    );
    assert!(
        decode::<ListVerb>(json!({"limit": "one"})).is_err(),
        "left for the decoding to refuse"
    );
}

/// Every description in every verb's schemas, with where it is.
fn descriptions(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("description", Value::String(text)) => out.push((at.into(), text.clone())),
                    _ => descriptions(v, &format!("{at}.{key}"), out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| descriptions(v, at, out)),
        _ => {}
    }
}

/// A model reads a description as prose: the doc comments' wrapping at 100 columns is gone (a
/// blank line stays a paragraph), and a rustdoc link (``[`Conflict`]``) is code, not a link.
#[test]
fn descriptions_are_prose_without_hard_breaks_or_links() {
    let mut found = Vec::new();
    for spec in forgestate::verbs::table() {
        let schemas = [(spec.request)(), (spec.answer)()];
        for schema in schemas {
            descriptions(&Value::Object(schema), spec.name, &mut found);
        }
    }
    assert!(found.len() > 200, "{}", found.len());
    assert!(
        found.iter().any(|(_, text)| text.contains("`Conflict`")),
        "a link became code"
    );
    for (at, text) in found {
        assert!(!text.replace("\n\n", "").contains('\n'), "{at}: {text:?}");
        assert!(!text.contains("`]"), "{at}: {text:?}");
    }
}
