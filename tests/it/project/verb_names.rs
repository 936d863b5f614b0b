//! A verb is defined in one place: its request type is named in its own file (and the files
//! under it) and in the table (`src/verbs/mod.rs`), nowhere else in the library's or the
//! binary's code; and no file outside `src/verbs/` keeps a list of verb names (eight or more
//! spelled as string literals), generated files (`@generated`) aside.

use std::collections::BTreeMap;
use std::path::Path;

use forgestate::verbs;

use super::layering::sources;
use crate::common;

/// Files that call each verb by name on purpose, one call per place (not a list kept beside the
/// table): a scenario test, and the LangGraph saver, whose one body of each method is driven
/// by both the sync and the async client through `(verb, args)` pairs.
const SCENARIOS: &[&str] = &[
    "tests/it/schema/answers.rs",
    "python/forgestate/langgraph.py",
];

/// Whether `code` holds `word` as a whole identifier.
fn names(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        let before = code[..at].chars().next_back().is_none_or(|c| !ident(c));
        let after = code[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !ident(c));
        before && after
    })
}

#[test]
fn each_request_type_is_named_in_its_own_file_and_the_table_only() {
    let sources = sources();
    // Every `type Request = X;` of a verb, and the file that declares `struct X`.
    let mut requests: BTreeMap<String, String> = BTreeMap::new();
    for s in sources.iter().filter(|s| s.rel.starts_with("src/verbs/")) {
        for line in s.code.lines() {
            let Some(name) = line
                .trim()
                .strip_prefix("type Request = ")
                .and_then(|r| r.strip_suffix(';'))
            else {
                continue;
            };
            let declared = sources
                .iter()
                .find(|d| d.code.contains(&format!("pub struct {name} ")))
                .map(|d| d.rel.clone())
                .unwrap_or_else(|| panic!("no file declares {name}"));
            requests.insert(name.to_string(), declared);
        }
    }
    assert!(requests.len() >= 20, "too few requests found: {requests:?}");
    let mut wrong = Vec::new();
    for (name, home) in &requests {
        let own_dir = home.trim_end_matches(".rs").to_string() + "/";
        for s in &sources {
            let allowed =
                s.rel == *home || s.rel.starts_with(&own_dir) || s.rel == "src/verbs/mod.rs";
            if !allowed && names(&s.code, name) {
                wrong.push(format!("{}: names {name} (declared in {home})", s.rel));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_file_outside_the_verbs_keeps_a_list_of_verb_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let quoted: Vec<String> = verbs::table()
        .iter()
        .map(|s| format!("\"{}\"", s.name))
        .collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for dir in ["src", "tests", "python"] {
        for path in common::files_under(&root.join(dir)) {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let code = path.extension().is_some_and(|e| e == "rs" || e == "py");
            if !code || rel.starts_with("src/verbs/") || SCENARIOS.contains(&rel.as_str()) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            checked += 1;
            if text.contains("@generated") {
                continue;
            }
            let spelled: Vec<&str> = quoted
                .iter()
                .filter(|q| text.contains(q.as_str()))
                .map(String::as_str)
                .collect();
            if spelled.len() >= 8 {
                wrong.push(format!("{rel}: {}", spelled.join(", ")));
            }
        }
    }
    assert!(checked > 100, "too few files checked: {checked}");
    assert!(
        wrong.is_empty(),
        "files that keep a list of verb names (derive it from `verbs::table()`):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn each_verb_has_a_file_of_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut wrong = Vec::new();
    for spec in verbs::table() {
        let rel = format!("src/verbs/{}.rs", spec.name.replace('-', "_"));
        match std::fs::read_to_string(root.join(&rel)) {
            Ok(code) if code.contains(&format!("name: \"{}\",", spec.name)) => {}
            Ok(_) => wrong.push(format!("{rel} does not hold the spec of {}", spec.name)),
            Err(e) => wrong.push(format!("{}: cannot read {rel}: {e}", spec.name)),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
