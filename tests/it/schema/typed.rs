//! Every verb's answer is typed all the way down: walking each answer schema of `forgestate
//! schema` (through `$ref`s into `$defs`, `anyOf`/`oneOf` branches and array items) finds no
//! object without properties, except the documented user data ([`walk::USER_DATA`]).

use serde_json::json;

use super::walk::{self, untyped, user_data};

#[test]
fn no_answer_holds_an_untyped_object_outside_user_data() {
    let table = super::table();
    let mut open = Vec::new();
    let mut allowed = Vec::new();
    for verb in table["verbs"].as_array().unwrap() {
        let name = verb["name"].as_str().unwrap();
        let answer = &verb["answer"];
        let mut found = Vec::new();
        untyped(answer, answer, name, &mut Vec::new(), &mut found);
        for path in found {
            match user_data(&path) {
                true => allowed.push(path),
                false => open.push(path),
            }
        }
    }
    assert!(
        open.is_empty(),
        "answer fields typed as an open object (derive JsonSchema for the type, or list the \
         field in USER_DATA if it is the user's own data):\n{}",
        open.join("\n")
    );
    // The walk went below the top level: it met the user data inside records.
    for expected in [
        "list.records[].data",
        "status.rows[].metrics",
        "resume.data",
    ] {
        assert!(
            allowed.iter().any(|p| p == expected),
            "{expected}: {allowed:#?}"
        );
    }
}

#[test]
fn the_walk_finds_open_objects_through_refs_branches_and_items() {
    let schema = json!({
        "type": "object",
        "properties": {
            "record": {"anyOf": [{"$ref": "#/$defs/Entry"}, {"type": "null"}]},
            "rows": {"type": "array", "items": {"type": "object", "additionalProperties": true}},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "data": {"description": "anything"}
        },
        "$defs": {
            "Entry": {
                "type": "object",
                "properties": {"comment": {"type": ["object", "null"]}, "kind": {"type": "string"}},
                "oneOf": [{"type": "object", "properties": {"metrics": true}}]
            }
        }
    });
    let mut found = Vec::new();
    untyped(&schema, &schema, "v", &mut Vec::new(), &mut found);
    found.sort();
    assert_eq!(
        found,
        ["v.data", "v.record.comment", "v.record.metrics", "v.rows[]"]
    );
    let open: Vec<&String> = found.iter().filter(|p| !user_data(p)).collect();
    assert_eq!(open, ["v.record.comment", "v.rows[]"]);
}

#[test]
fn the_validator_reports_wrong_types_missing_and_undeclared_keys() {
    let schema = json!({
        "type": "object",
        "required": ["record"],
        "properties": {"record": {"$ref": "#/$defs/Entry"}},
        "$defs": {
            "Entry": {
                "type": "object",
                "required": ["agent"],
                "properties": {"agent": {"type": "string"}, "seq": {"type": ["integer", "null"], "minimum": 0}},
                "oneOf": [
                    {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "checkpoint"}, "data": {}}},
                    {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "health"}, "metrics": {}}}
                ]
            }
        }
    });
    let good =
        json!({"record": {"agent": "w", "seq": 1, "kind": "checkpoint", "data": {"x": [1]}}});
    assert_eq!(
        walk::violations(&schema, &good, &schema, "a"),
        Vec::<String>::new()
    );
    let bad =
        json!({"record": {"agent": 1, "seq": -1, "kind": "health", "data": {}, "extra": true}});
    let got = walk::violations(&schema, &bad, &schema, "a");
    for expected in [
        "a.record.agent: 1 is not",
        "a.record.seq: -1 is below 0",
        "a.record.data: written, but not in the schema",
        "a.record.extra: written, but not in the schema",
    ] {
        assert!(
            got.iter().any(|g| g.starts_with(expected)),
            "{expected}: {got:#?}"
        );
    }
    let missing = walk::violations(&schema, &json!({}), &schema, "a");
    assert_eq!(missing, ["a: the required \"record\" is missing"]);
}
