//! Files of one directory import each other in one direction: no two sibling files (or longer
//! rings of them) depend on each other. The directory's own `mod.rs` is the root that declares
//! them and is left out; what siblings share lives in a sibling that imports none of them.

use std::collections::{BTreeMap, BTreeSet};

use super::layering::{Source, code_of, group_heads, ident_at, module_path, sources};

/// Rings that are known and only shrink: a ring listed here that no longer exists fails the test,
/// so the list cannot go stale. `format/record.rs` and `format/session.rs` are one type's two
/// halves (a record and its session fields); the MCP server and its resource/prompt extras call
/// each other through the server type.
const KNOWN: &[&str] = &["format: record, session", "mcp: extras, server"];

/// The sibling modules a file names through `super::x` (one level up: its own directory).
fn sibling_heads(code: &str) -> Vec<String> {
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut heads = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("super::") {
        let start = i + at;
        let after = &code[start + "super::".len()..];
        i = start + "super::".len();
        let boundary = start == 0 || !is_ident(bytes[start - 1]) && bytes[start - 1] != b':';
        if !boundary || after.starts_with("super::") {
            continue;
        }
        if after.starts_with('{') {
            heads.extend(group_heads(after));
        } else {
            heads.push(ident_at(after).to_string());
        }
    }
    heads
}

/// Every ring of sibling files, as `dir: a, b, ...` (members sorted).
fn rings(sources: &[Source]) -> Vec<String> {
    let modules: BTreeSet<&[String]> = sources.iter().map(|s| s.module.as_slice()).collect();
    // dir -> (file -> siblings it names)
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for s in sources {
        let Some((own, dir)) = s.module.split_last() else {
            continue;
        };
        let edges = graphs
            .entry(dir.to_vec())
            .or_default()
            .entry(own.clone())
            .or_default();
        for head in sibling_heads(&s.code) {
            let mut sibling = dir.to_vec();
            sibling.push(head.clone());
            if head != *own && modules.contains(sibling.as_slice()) {
                edges.insert(head);
            }
        }
    }
    let mut found = Vec::new();
    for (dir, graph) in &graphs {
        // Two files are in one ring when each reaches the other.
        let reach = |from: &str| -> BTreeSet<String> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from.to_string()];
            while let Some(n) = todo.pop() {
                for m in graph.get(&n).into_iter().flatten() {
                    if seen.insert(m.clone()) {
                        todo.push(m.clone());
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&String, BTreeSet<String>> =
            graph.keys().map(|k| (k, reach(k))).collect();
        let mut done = BTreeSet::new();
        for (file, r) in &reaches {
            if done.contains(*file) || !r.contains(*file) {
                continue;
            }
            let ring: BTreeSet<String> = r
                .iter()
                .filter(|o| reaches.get(o).is_some_and(|back| back.contains(*file)))
                .cloned()
                .collect();
            done.extend(ring.iter().cloned());
            let names: Vec<&str> = ring.iter().map(String::as_str).collect();
            let dir = if dir.is_empty() {
                "src".to_string()
            } else {
                dir.join("/")
            };
            found.push(format!("{dir}: {}", names.join(", ")));
        }
    }
    found
}

#[test]
fn sibling_files_import_each_other_in_one_direction() {
    let found = rings(&sources());
    let new: Vec<&String> = found
        .iter()
        .filter(|r| !KNOWN.contains(&r.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "these files of one directory import each other (move what they share into a file that \
         imports neither): {new:#?}"
    );
    let gone: Vec<&&str> = KNOWN
        .iter()
        .filter(|k| !found.iter().any(|f| f == *k))
        .collect();
    assert!(
        gone.is_empty(),
        "these known rings are gone: remove them from KNOWN: {gone:?}"
    );
}

#[test]
fn the_ring_finder_sees_a_ring_through_groups_and_paths_and_ignores_the_parent() {
    let source = |rel: &str, text: &str| Source {
        rel: rel.to_string(),
        module: module_path(rel),
        code: code_of(text),
    };
    let sources = [
        source("src/d/mod.rs", "mod a; mod b; mod c; use a::x;"),
        source("src/d/a.rs", "use super::{b::Y, Z};\n// super::c::comment"),
        source("src/d/b.rs", "fn f() { super::c::g(); }"),
        source("src/d/c.rs", "use super::{self, a};"),
        source("src/d/e.rs", "use super::a; use super::super::other::x;"),
    ];
    assert_eq!(rings(&sources), vec!["d: a, b, c".to_string()]);
    let acyclic = [
        source("src/d/a.rs", "use super::b;"),
        source("src/d/b.rs", "use super::Root;"),
    ];
    assert!(rings(&acyclic).is_empty());
}
