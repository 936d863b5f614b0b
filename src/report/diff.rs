//! What changed between two JSON values: added, removed and changed keys, each with its path.
//!
//! Pure. Paths are JSON Pointers (RFC 6901: `/subtasks/2`, with `~` and `/` in keys escaped as
//! `~0` and `~1`), so a path names one place whatever the keys hold. Objects are compared key
//! by key and arrays index by index; anything else is compared whole.

use serde::Serialize;
use serde_json::Value;

/// What happened at one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// The path exists only in the newer value.
    Added,
    /// The path exists only in the older value.
    Removed,
    /// The path holds a different value.
    Changed,
}

/// One change. In JSON: `{"op": "changed", "path": "/a/0", "old": 1, "new": 2}`; `old` is
/// absent for an addition and `new` for a removal.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Change {
    /// What happened.
    pub op: Op,
    /// Where, as a JSON Pointer (`""` is the whole value).
    pub path: String,
    /// The value before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    /// The value after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
}

/// The changes that turn `old` into `new`, in key order (objects) and index order (arrays).
///
/// ```
/// use forgestate::report::diff::{Op, diff};
/// use serde_json::json;
///
/// let changes = diff(&json!({"done": [1], "pr": null}), &json!({"done": [1, 2], "branch": "b"}));
/// let summary: Vec<(Op, &str)> = changes.iter().map(|c| (c.op, c.path.as_str())).collect();
/// assert_eq!(summary, [(Op::Added, "/branch"), (Op::Added, "/done/1"), (Op::Removed, "/pr")]);
/// ```
pub fn diff(old: &Value, new: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk(old, new, &mut String::new(), &mut out);
    out
}

fn walk(old: &Value, new: &Value, path: &mut String, out: &mut Vec<Change>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                side(a.get(key.as_str()), b.get(key.as_str()), path, out);
                path.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                side(a.get(i), b.get(i), path, out);
                path.truncate(len);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Change {
            op: Op::Changed,
            path: path.clone(),
            old: Some(a.clone()),
            new: Some(b.clone()),
        }),
    }
}

fn side(old: Option<&Value>, new: Option<&Value>, path: &mut String, out: &mut Vec<Change>) {
    let change = |op, old: Option<&Value>, new: Option<&Value>| Change {
        op,
        path: path.clone(),
        old: old.cloned(),
        new: new.cloned(),
    };
    match (old, new) {
        (Some(a), Some(b)) => walk(a, b, path, out),
        (None, Some(_)) => out.push(change(Op::Added, None, new)),
        (Some(_), None) => out.push(change(Op::Removed, old, None)),
        (None, None) => {}
    }
}
