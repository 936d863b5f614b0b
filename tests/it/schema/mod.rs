//! `forgestate schema` itself: every nested answer object typed (only user data stays open),
//! the real answers valid under their schemas, and the committed snapshot of the whole table.

mod answers;
mod generate;
mod plain;
mod snapshot;
mod table;
mod typed;
pub mod walk;

use serde_json::Value;

use crate::common::cli::{Bin, parse_ok, words};

/// `forgestate schema`, parsed.
pub fn table() -> Value {
    let dir = tempfile::tempdir().unwrap();
    let args = words("schema");
    parse_ok(&args, &Bin::new(dir.path()).run(&args))
}

/// The verb named `name` in `table`.
pub fn verb<'a>(table: &'a Value, name: &str) -> &'a Value {
    table["verbs"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == name))
        .unwrap_or_else(|| panic!("no verb {name} in the table"))
}
