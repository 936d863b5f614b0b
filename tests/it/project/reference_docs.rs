//! The reference parts of the README, docs/cli.md and docs/mcp.md name every command, flag and
//! tool the binary has: the README's list of verbs names each subcommand of `forgestate --help`,
//! docs/cli.md's generated block lists each verb's flags, with every value a flag takes, and
//! docs/mcp.md's tools table each tool `forgestate mcp` serves, its arguments and answer fields.

use serde_json::Value;

use crate::common::cli::{Bin, stdout, words};

use super::docs::root;

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_default()
}

/// The subcommands `forgestate --help` lists: the first word of each indented line that has a
/// description after it.
fn subcommands() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let help = stdout(&Bin::new(dir.path()).run(&words("--help")));
    help.lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_once("  "))
        .map(|(name, _)| name)
        .filter(|name| !name.is_empty() && !name.contains(' ') && !name.starts_with('-'))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_names_every_subcommand() {
    let readme = read("README.md");
    let cli = readme
        .split("- **CLI**")
        .nth(1)
        .and_then(|rest| rest.split("- **MCP**").next())
        .unwrap_or_default();
    let names = subcommands();
    assert!(
        names.len() > 20 && names.iter().any(|n| n == "call"),
        "{names:?}"
    );
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !cli.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "the README's list of verbs lacks {missing:?}"
    );
}

#[test]
fn cli_md_lists_every_flag_of_every_verb_and_its_values() {
    let doc = read("docs/cli.md");
    let dir = tempfile::tempdir().unwrap();
    let table: Value = serde_json::from_str(&stdout(&Bin::new(dir.path()).run(&words("schema"))))
        .expect("the table is JSON");
    let mut missing = Vec::new();
    for verb in table["verbs"].as_array().into_iter().flatten() {
        let name = verb["name"].as_str().unwrap_or_default();
        let heading = format!("#### `forgestate {name}`");
        let Some(section) = doc.split(&heading).nth(1) else {
            missing.push(format!("{name}: no section"));
            continue;
        };
        let section = section.split("#### ").next().unwrap_or_default();
        for (field, flag) in verb["flags"].as_object().into_iter().flatten() {
            // A table cell escapes `|` (`<FILE\|->`).
            let flag = flag.as_str().unwrap_or_default().replace('|', "\\|");
            if !section.contains(&format!("`{flag}`")) {
                missing.push(format!("{name}: {flag} ({field})"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/cli.md lacks: {missing:#?}");
    // `latest --kind` takes `end` too, and `--phase` narrows it.
    let latest = doc
        .split("#### `forgestate latest`")
        .nth(1)
        .unwrap_or_default();
    let latest = latest.split("#### ").next().unwrap_or_default();
    assert!(
        latest.contains("`--phase`") && latest.contains("`end`"),
        "{latest}"
    );
}

/// Every property of a tool's schema (`inputSchema` or `outputSchema`): its own and those of
/// the branches it is made of (`allOf`, `anyOf`, `oneOf`, `$ref` into its `$defs`).
fn property_names(schema: &Value, root: &Value, names: &mut Vec<String>) {
    let schema = match schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        Some(name) => &root["$defs"][name],
        None => schema,
    };
    names.extend(
        schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone()),
    );
    for key in ["allOf", "anyOf", "oneOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            property_names(branch, root, names);
        }
    }
}

/// docs/mcp.md's tools table has a row for every tool `forgestate mcp` serves, naming each of
/// its arguments and each field of its answer (issue #41: the hand-kept table lacked
/// checkpoint's `id`, list's `all`, latest's `offline` and history's `conflicts`).
#[tokio::test(flavor = "multi_thread")]
async fn mcp_md_names_every_argument_and_answer_field_of_every_tool() {
    let doc = read("docs/mcp.md");
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let (client, _stderr) = crate::mcp_client::connect(&bin, "--store st").await;
    let tools = client.list_all_tools().await.expect("tools/list");
    client.cancel().await.expect("close");
    assert!(tools.len() >= 10, "{} tools", tools.len());
    let mut missing = Vec::new();
    for tool in &tools {
        let name = tool.name.as_ref();
        let Some(row) = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
        else {
            missing.push(format!("{name}: no row"));
            continue;
        };
        // The cells: tool, arguments, answers (a `|` inside a cell is escaped).
        let cells: Vec<String> = row
            .replace("\\|", "\u{0}")
            .split('|')
            .map(str::to_string)
            .collect();
        let input = Value::Object((*tool.input_schema).clone());
        let output = tool
            .output_schema
            .as_ref()
            .map(|o| Value::Object((**o).clone()))
            .unwrap_or_default();
        for (schema, column, what) in [(&input, 2, "argument"), (&output, 3, "answer field")] {
            let cell = cells.get(column).map(String::as_str).unwrap_or_default();
            let mut names = Vec::new();
            property_names(schema, schema, &mut names);
            for field in names {
                if !cell.contains(&format!("`{field}`")) {
                    missing.push(format!("{name}: {what} {field}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/mcp.md's tools table lacks: {missing:#?}"
    );
}
