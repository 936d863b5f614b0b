//! The reference parts of the README and docs/cli.md name every command and every flag the
//! binary has: the README's list of verbs names each subcommand of `forgestate --help`, and
//! docs/cli.md's generated block lists each verb's flags, with every value a flag takes.

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
