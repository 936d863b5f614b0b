//! JSON diffs: added, removed and changed paths, as JSON Pointers.

use forgestate::report::diff::{Op, diff};
use serde_json::json;

#[test]
fn nested_changes_carry_their_paths_and_values() {
    let old = json!({"a": {"x": 1, "y": [1, 2, 3]}, "gone": true, "same": "s"});
    let new = json!({"a": {"x": 2, "y": [1, 2]}, "new/key~": {"k": null}, "same": "s"});
    let changes = diff(&old, &new);
    let doc = serde_json::to_value(&changes).unwrap();
    assert_eq!(
        doc,
        json!([
            {"op": "changed", "path": "/a/x", "old": 1, "new": 2},
            {"op": "removed", "path": "/a/y/2", "old": 3},
            {"op": "removed", "path": "/gone", "old": true},
            {"op": "added", "path": "/new~1key~0", "new": {"k": null}},
        ])
    );
}

#[test]
fn equal_values_have_no_changes_and_a_type_change_is_one_change() {
    let v = json!({"a": [1, {"b": 2}], "n": 18446744073709551616u128.to_string()});
    assert!(diff(&v, &v).is_empty());
    let changes = diff(&json!({"a": [1]}), &json!({"a": {"0": 1}}));
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].op, Op::Changed);
    assert_eq!(changes[0].path, "/a");
    assert_eq!(diff(&json!(1), &json!(2))[0].path, "");
}
