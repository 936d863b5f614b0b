//! The verb table itself, through the library's public API: names unique, every verb on the
//! CLI, schemas that are objects without a title or Rust's integer formats at any depth, a
//! runnable example each, and the MCP tools the agent-facing verbs.

use serde_json::Value;

use forgestate::verbs::{Face, Group, ListAnswer, Runs, answer_schema, runs, spec, table};

#[test]
fn the_table_is_well_formed() {
    let table = table();
    let mut names: Vec<&str> = table.iter().map(|s| s.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), table.len(), "names are unique");
    for s in &table {
        assert!(s.on(Face::Cli), "{} is on the CLI", s.name);
        assert!(!s.description.contains('\n'), "{}", s.name);
        assert!(!(s.read_only && s.destructive), "{}", s.name);
        for schema in [(s.request)(), (s.answer)()] {
            assert_eq!(schema["type"], "object", "{}", s.name);
            assert!(!schema.contains_key("title"), "{}", s.name);
        }
        assert_eq!(spec(s.name).map(|f| f.name), Some(s.name));
        let example: Value = serde_json::from_str(s.example).unwrap_or_default();
        assert!(
            example.is_object(),
            "{}: the example is a JSON object",
            s.name
        );
    }
    // The MCP tools are the agents' and supervisors' verbs that answer once (not a stream, not
    // this machine's outboxes or setup), and an MCP tool is on Python too.
    for s in &table {
        let agents = matches!(s.group, Group::Agents | Group::Supervisors);
        let once = runs(s.name) == Some(Runs::Library);
        assert_eq!(s.on(Face::Mcp), agents && once, "{} on MCP", s.name);
        assert!(
            !s.on(Face::Mcp) || s.on(Face::Python),
            "{} on Python",
            s.name
        );
    }
    assert!(spec("checkpoint").is_some_and(|s| s.on(Face::Mcp)));
}

/// Every `format` naming a Rust integer width anywhere in `v`, with its path.
fn rust_formats(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let rust = |f: &str| f.starts_with("int") || f.starts_with("uint");
                if k == "format" && v.as_str().is_some_and(rust) {
                    out.push(format!("{at}: {v}"));
                }
                rust_formats(v, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| rust_formats(i, at, out)),
        _ => {}
    }
}

#[test]
fn no_schema_names_an_integer_format_at_any_depth() {
    let mut found = Vec::new();
    for s in table() {
        let request = Value::Object((s.request)());
        let answer = Value::Object((s.answer)());
        rust_formats(&request, &format!("{}/request", s.name), &mut found);
        rust_formats(&answer, &format!("{}/answer", s.name), &mut found);
    }
    assert!(found.is_empty(), "{found:#?}");
    // The nested answer types are in the answers' `$defs`, where formats were stripped too.
    let list = Value::Object(answer_schema::<ListAnswer>());
    assert!(list["$defs"]["CommentInfo"]["properties"]["id"].is_object());
}
