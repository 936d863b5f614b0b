//! The record types: the JSON shape, big numbers, the constructors' checks.

use forgestate::format::{BuildError, Record, new_record_id};
use serde_json::{Value, json};

#[test]
fn json_shape_is_flat_and_tagged() {
    let r = Record::checkpoint("a", "s", "p", json!({"k": 1})).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["kind"], "checkpoint");
    assert_eq!(v["phase"], "p");
    assert_eq!(v["data"]["k"], 1);
    assert_eq!(v["version"], "2.0");
    let back: Record = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

#[test]
fn big_numbers_survive_the_flattened_json_shape() {
    let data: Value =
        serde_json::from_str(r#"{"big": 18446744073709551616, "n": 1e400, "f": 0.1}"#).unwrap();
    let r = Record::checkpoint("a", "s", "p", data).unwrap();
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains(r#""big":18446744073709551616"#), "{text}");
    let back: Record = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
    assert_eq!(back.data()["big"].to_string(), "18446744073709551616");
}

#[test]
fn constructors_validate() {
    assert!(matches!(
        Record::checkpoint("a", "s", "p", json!([1])),
        Err(BuildError::NotAnObject {
            found: "an array",
            ..
        })
    ));
    assert!(Record::checkpoint("a", "x\nPhase: evil", "p", json!({})).is_err());
    assert!(Record::health("a", "s", "Active", json!({}), Some("")).is_err());
    let ids: std::collections::HashSet<_> = (0..100).map(|_| new_record_id()).collect();
    assert_eq!(ids.len(), 100);
}
