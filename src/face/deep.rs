//! An argument nested deeper than a face's parser reads a document (serde_json stops at 128
//! levels), as both faces hand it to the verb: JSON text to a field that takes the JSON text of
//! an object (`checkpoint`'s `data`), which the verb then parses as the CLI parses `--data`;
//! to any other field its first levels only, so the verb refuses it as it refuses a shallow
//! value of that shape (a usage error), never taking the text for a name.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The levels of a deep argument kept for a field that does not take JSON text: enough for
/// every typed field of a request (a list of names) to meet the mismatch it would meet whole.
const KEPT_LEVELS: usize = 2;

/// The argument `key` of `verb`, given as the JSON text `raw` too deep to read whole; `Err` with
/// the usage message when the field takes any JSON (`intent_data`), which its text would
/// silently become.
pub fn argument(verb: &str, key: &str, raw: &str) -> Result<Value, String> {
    let schema = forgestate::verbs::spec(verb).map(|spec| (spec.request)());
    let field = schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(key));
    match field {
        Some(f) if f.get("type") == Some(&Value::String("object".into())) => {
            Ok(Value::String(raw.to_string()))
        }
        Some(f) if f.get("type").is_none() && f.get("$ref").is_none() => Err(format!(
            "the arguments of {verb} do not fit its schema: `{key}` nests too deeply to read \
             (forgestate reads a value at most 127 levels deep); store it flatter"
        )),
        // A typed field, an unknown one or an unknown verb: refused by the verb as it is.
        _ => Ok(shallow(raw, KEPT_LEVELS)),
    }
}

/// The JSON text `raw` read `levels` levels down; the arrays and objects below them empty.
fn shallow(raw: &str, levels: usize) -> Value {
    let raw = raw.trim_start();
    match raw.as_bytes().first() {
        Some(b'[') => match levels {
            0 => Value::Array(Vec::new()),
            _ => serde_json::from_str::<Vec<&RawValue>>(raw)
                .map(|items| {
                    let items = items.iter().map(|i| shallow(i.get(), levels - 1));
                    Value::Array(items.collect())
                })
                .unwrap_or(Value::Array(Vec::new())),
        },
        Some(b'{') => match levels {
            0 => Value::Object(Map::new()),
            _ => serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(raw)
                .map(|fields| {
                    let fields = fields
                        .into_iter()
                        .map(|(k, v)| (k, shallow(v.get(), levels - 1)));
                    Value::Object(fields.collect())
                })
                .unwrap_or(Value::Object(Map::new())),
        },
        _ => serde_json::from_str(raw).unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deep_value_keeps_its_first_levels_only() {
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert_eq!(shallow(&deep, 2), serde_json::json!([[[]]]));
        let mixed = r#"{"a": [1, {"b": [2]}], "c": "x"}"#;
        assert_eq!(
            shallow(mixed, 2),
            serde_json::json!({"a": [1, {}], "c": "x"})
        );
    }

    #[test]
    fn only_a_field_taking_an_object_gets_the_text() {
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert_eq!(
            argument("checkpoint", "data", &deep),
            Ok(Value::String(deep.clone()))
        );
        assert_eq!(
            argument("list", "session", &deep),
            Ok(serde_json::json!([[[]]]))
        );
        assert!(argument("checkpoint", "intent_data", &deep).is_err());
    }
}
