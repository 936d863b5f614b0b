//! The snapshot of `forgestate schema` (as github-mcp-server snapshots its tools): the committed
//! `tests/it/snapshots/schema.json` is what the binary prints, so a change to any verb's
//! request, answer or description shows in review. `UPDATE_SNAPSHOTS=1` rewrites it.

use std::path::PathBuf;

use crate::common::cli::{Bin, stderr, stdout, words};

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/snapshots/schema.json")
}

/// Where `old` and `new` first differ: the line number, a few lines of each, and how many lines
/// differ in all (a hint, not a diff).
fn first_difference(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let Some(at) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) else {
        return "the files differ only in their line ends".to_string();
    };
    let differing = (0..a.len().max(b.len()))
        .filter(|&i| a.get(i) != b.get(i))
        .count();
    let show = |lines: &[&str]| -> String {
        let from = at.saturating_sub(2);
        let to = (at + 3).min(lines.len());
        lines.get(from..to).unwrap_or_default().join("\n")
    };
    format!(
        "first difference at line {} ({differing} lines differ; {} lines committed, {} now)\n\
         --- committed\n{}\n+++ forgestate schema\n{}",
        at + 1,
        a.len(),
        b.len(),
        show(&a),
        show(&b)
    )
}

#[test]
fn forgestate_schema_matches_the_committed_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path()).run(&words("schema"));
    assert!(out.status.success(), "{}", stderr(&out));
    let now = stdout(&out);
    let path = snapshot_path();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let Ok(committed) = std::fs::read_to_string(&path) else {
        panic!(
            "no snapshot at {}: run `UPDATE_SNAPSHOTS=1 cargo test --test it -- schema::snapshot` \
             to write it, and commit it",
            path.display()
        );
    };
    assert!(
        committed == now,
        "`forgestate schema` no longer matches {}: review the change, then rerun with \
         UPDATE_SNAPSHOTS=1 (`UPDATE_SNAPSHOTS=1 cargo test --test it -- schema::snapshot`) to \
         rewrite the snapshot and commit it.\n{}",
        path.display(),
        first_difference(&committed, &now)
    );
}

#[test]
fn the_hint_names_the_first_differing_line() {
    let hint = first_difference("a\nb\nc\n", "a\nB\nc\n");
    assert!(
        hint.starts_with("first difference at line 2 (1 lines differ"),
        "{hint}"
    );
    assert!(hint.contains("--- committed\na\nb\nc"), "{hint}");
    assert!(hint.contains("+++ forgestate schema\na\nB\nc"), "{hint}");
}
