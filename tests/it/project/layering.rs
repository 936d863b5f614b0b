//! The import direction, enforced: every `crate::` and `super::` path in `src/**/*.rs` must
//! point down the stack (or stay inside its own module). The stack, bottom first:
//!
//! 1. the format and the leaves: `format`, `progress`, `fsutil`
//! 2. `defaults` (it lists the format's own defaults) and `store` (the `Thread` trait, the
//!    comment types, the local store)
//! 3. the pure model over stored comments: `scan`, `error`; then `resume`; then `report`
//! 4. the other stores: `forge`, `durable`, `mirror`; then `backend` (both backends, one type)
//! 5. `config` (plain settings, no client)
//! 6. `client` and `doctor`
//! 7. the faces, in the binary: `cli` (which starts `mcp`), `mcp`
//!
//! Imports between two modules of the same layer fail too, so the order above is total where
//! it matters. The library never names `cli` or `mcp`; `mcp` reaches no `cli` internals except
//! the files in [`KNOWN_MCP_TO_CLI`] (see there).

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each library module's layer (higher is further up the stack).
const LAYERS: &[(&str, u8)] = &[
    ("format", 0),
    ("defaults", 1),
    ("progress", 0),
    ("fsutil", 0),
    ("store", 1),
    ("scan", 2),
    ("error", 2),
    ("resume", 3),
    ("report", 4),
    ("forge", 5),
    ("durable", 5),
    ("mirror", 5),
    ("backend", 6),
    ("config", 7),
    ("client", 8),
    ("doctor", 8),
    ("verbs", 9),
];

/// Files of `src/mcp/` allowed to import `cli` internals: none. What both faces need (exit
/// codes, the error document, the scrubber) is in `src/face/`. A file listed here that no longer
/// offends fails the test, so the list only shrinks.
const KNOWN_MCP_TO_CLI: &[&str] = &[];

/// The binary's own files: `crate::` there is the binary's root, not the library's.
pub(super) fn in_binary(rel: &str) -> bool {
    rel == "src/main.rs"
        || rel.starts_with("src/cli/")
        || rel.starts_with("src/mcp/")
        || rel.starts_with("src/face/")
}

/// The module path of a file: `src/a/b.rs` and `src/a/b/mod.rs` are `[a, b]`, `src/lib.rs` is
/// `[]`.
pub(super) fn module_path(rel: &str) -> Vec<String> {
    let inner = rel.strip_prefix("src/").unwrap_or(rel);
    let inner = inner.strip_suffix(".rs").unwrap_or(inner);
    let mut parts: Vec<String> = inner.split('/').map(str::to_string).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The source without comment lines and without `#[cfg(test)]` items (test code may reach
/// anywhere; it is not part of the stack).
pub(super) fn code_of(source: &str) -> String {
    let lines: Vec<&str> = source
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    let text = lines.join("\n");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        // The item ends at its `;` (an out-of-line `mod tests;`) or its matching `}`.
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

pub(super) fn ident_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first segment of each path in a `{a::b, c, d::{e, f}}` group.
pub(super) fn group_heads(text: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut start = true;
    for (i, c) in text.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    start = true;
                    continue;
                }
            }
            '}' => {
                if depth <= 1 {
                    break;
                }
                depth -= 1;
            }
            ',' if depth == 1 => {
                start = true;
                continue;
            }
            _ => {}
        }
        if start && depth == 1 && !c.is_whitespace() {
            let head = ident_at(&text[i..]);
            if !head.is_empty() {
                heads.push(head.to_string());
            }
            start = false;
        }
    }
    heads
}

/// The names each path leaving the current file starts with, resolved to the crate root:
/// `crate::a::b` and `crate::{a, b}` give `a`, `b`; `super::x` in module `[m]` gives `x`, and
/// in module `[m, n]` gives `m` (its own module).
pub(super) fn targets(code: &str, module: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let boundary = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':';
        let (depth_up, after) = if boundary && rest.starts_with("crate::") {
            (None, &rest["crate::".len()..])
        } else if boundary && rest.starts_with("super::") {
            let mut ups = 0;
            let mut tail = rest;
            while let Some(t) = tail.strip_prefix("super::") {
                ups += 1;
                tail = t;
            }
            (Some(ups), tail)
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let heads = if after.starts_with('{') {
            group_heads(after)
        } else {
            vec![ident_at(after).to_string()]
        };
        let base: Vec<String> = match depth_up {
            None => Vec::new(),
            Some(ups) => module[..module.len().saturating_sub(ups)].to_vec(),
        };
        for head in heads.into_iter().filter(|h| !h.is_empty() && h != "self") {
            found.push(base.first().cloned().unwrap_or(head));
        }
        i += rest.len() - after.len();
    }
    found
}

/// `lib.rs`'s `pub use module::{Name, ...}` re-exports: `crate::Name` names that module.
pub(super) fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for item in code_of(lib).split(';') {
        let Some(path) = item.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = ident_at(path).to_string();
        let rest = path[module.len()..].trim_start_matches("::");
        let names = if rest.starts_with('{') {
            group_heads(rest)
        } else {
            vec![rest.rsplit("::").next().unwrap_or(rest).trim().to_string()]
        };
        for name in names {
            map.insert(name, module.clone());
        }
    }
    map
}

pub(super) struct Source {
    pub(super) rel: String,
    pub(super) module: Vec<String>,
    pub(super) code: String,
}

pub(super) fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found: Vec<Source> = common::files_under(&root.join("src"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p: PathBuf| {
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
            Source {
                module: module_path(&rel),
                code: code_of(&text),
                rel,
            }
        })
        // Out-of-line test modules (`#[path = "x_tests.rs"] mod tests;`) are test code.
        .filter(|s| !s.rel.ends_with("_tests.rs"))
        .collect();
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    assert!(
        found.len() > 50,
        "too few sources found under src/: {}",
        found.len()
    );
    found
}

fn layer_of(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

#[test]
fn every_library_import_points_down_the_stack() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let names = reexports(&lib);
    assert_eq!(
        names.get("Client").map(String::as_str),
        Some("client"),
        "{names:?}"
    );
    let mut wrong = Vec::new();
    for source in sources().iter().filter(|s| !in_binary(&s.rel)) {
        let Some(own) = source.module.first() else {
            continue; // lib.rs: the re-exports
        };
        let Some(own_layer) = layer_of(own) else {
            wrong.push(format!(
                "{}: module `{own}` has no layer in LAYERS",
                source.rel
            ));
            continue;
        };
        for target in targets(&source.code, &source.module) {
            let target = names.get(&target).cloned().unwrap_or(target);
            if target == *own {
                continue;
            }
            if target == "cli" || target == "mcp" {
                wrong.push(format!(
                    "{}: the library names the `{target}` face",
                    source.rel
                ));
                continue;
            }
            match layer_of(&target) {
                None => wrong.push(format!("{}: `{target}` is not a module with a layer", source.rel)),
                Some(l) if l >= own_layer => wrong.push(format!(
                    "{}: `{own}` (layer {own_layer}) imports `{target}` (layer {l}), which is not below it",
                    source.rel
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the stack:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn config_builds_no_client_and_the_library_declares_no_face() {
    for source in sources().iter().filter(|s| !in_binary(&s.rel)) {
        if source.rel.starts_with("src/config/") {
            assert!(
                !source.code.contains("crate::client") && !source.code.contains("Client::"),
                "{}: configuration produces settings; the front door (client/builder.rs) builds clients",
                source.rel
            );
        }
        let words: Vec<&str> = source
            .code
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        for face in ["cli", "mcp"] {
            // The one exception: the verbs' own part of the CLI (`verbs::cli` and each group's
            // `cli` text: flags, extras, text; issue #40); printing, argv and exit codes stay
            // in the binary.
            let verbs_cli = face == "cli" && source.rel.starts_with("src/verbs/");
            assert!(
                verbs_cli || !words.windows(2).any(|w| w == ["mod", face]),
                "{}: declares `mod {face}`; the faces live in the binary",
                source.rel
            );
        }
    }
}

#[test]
fn mcp_reaches_no_cli_internals_beyond_the_known_files() {
    let mut offenders = Vec::new();
    for source in sources().iter().filter(|s| s.rel.starts_with("src/mcp/")) {
        if targets(&source.code, &source.module)
            .iter()
            .any(|t| t == "cli")
        {
            offenders.push(source.rel.clone());
        }
    }
    let unlisted: Vec<_> = offenders
        .iter()
        .filter(|o| !KNOWN_MCP_TO_CLI.contains(&o.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "src/mcp/ imports cli internals in {unlisted:?}; move what both faces need out of cli/"
    );
    let fixed: Vec<_> = KNOWN_MCP_TO_CLI
        .iter()
        .filter(|k| !offenders.iter().any(|o| o == *k))
        .collect();
    assert!(
        fixed.is_empty(),
        "{fixed:?} no longer import cli: remove them from KNOWN_MCP_TO_CLI"
    );
}

#[test]
fn every_library_module_has_a_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = code_of(&std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs"));
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .map(|l| l.trim_end_matches(';').trim())
        .collect();
    assert!(declared.len() >= 10, "{declared:?}");
    let missing: Vec<_> = declared.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules with no layer in LAYERS: {missing:?}"
    );
}

#[test]
fn the_scanner_reads_paths_as_rustc_does() {
    let module = vec!["client".to_string(), "builder".to_string()];
    let code = code_of(
        "use crate::{config::Config, store::{self, Thread}, Error};\n\
         // use crate::cli::nothing;\n\
         /// [`crate::doctor`] in a doc comment\n\
         use super::Client;\n\
         fn f() { let x = crate::format::parse(y); let s = \"not_crate::x\"; }\n\
         #[cfg(test)]\n\
         mod tests { use crate::mcp::x; }\n\
         #[cfg(test)]\n\
         mod more;\n\
         use crate::mirror;",
    );
    assert_eq!(
        targets(&code, &module),
        ["config", "store", "Error", "client", "format", "mirror"]
    );
    // `super::` from a top-level file reaches the crate root; `super::super` climbs twice.
    assert_eq!(
        targets("use super::scan::Entry;", &["resume".into()]),
        ["scan"]
    );
    let deep = vec![
        "forge".to_string(),
        "http".to_string(),
        "builder".to_string(),
    ];
    assert_eq!(targets("use super::super::store;", &deep), ["forge"]);
    assert_eq!(module_path("src/forge/http/mod.rs"), ["forge", "http"]);
    assert_eq!(module_path("src/lib.rs"), Vec::<String>::new());
    let names = reexports("pub use client::{Client, Outcome};\npub use error::{Error, Result};");
    assert_eq!(names.get("Outcome").map(String::as_str), Some("client"));
    assert_eq!(names.get("Result").map(String::as_str), Some("error"));
}

/// What the faces (the binary's `cli/`, `mcp/` and `face/`) may name in the library: the verb
/// table and the public types (the record format, scans, reports, settings, errors), plus the
/// machine-wide pieces the CLI runs over the configuration (`doctor`, the outboxes of
/// `durable`). Not the client's internals, the read cache or the forge client: a face that
/// needs one of those is running a verb a second time.
const FACE_MAY_NAME: &[&str] = &[
    "verbs", "format", "scan", "report", "config", "backend", "store", "defaults", "progress",
    "resume", "error", "doctor", "durable",
];

/// The heads of every `forgestate::…` path in `code`: `forgestate::verbs::x` and
/// `forgestate::{verbs, Client}` give `verbs`, `Client`; a glob `forgestate::client::*` gives
/// `client`.
pub(super) fn library_heads(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    while let Some(i) = code[at..].find("forgestate::").map(|i| i + at) {
        at = i + "forgestate::".len();
        if i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == b':') {
            continue;
        }
        let after = &code[at..];
        if after.starts_with('{') {
            found.extend(group_heads(after));
        } else {
            found.push(ident_at(after).to_string());
        }
    }
    found
}

#[test]
fn the_faces_name_only_the_verb_table_and_public_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let types = reexports(&lib);
    let mut wrong = Vec::new();
    for source in sources().iter().filter(|s| in_binary(&s.rel)) {
        for head in library_heads(&source.code) {
            let public_type = types.contains_key(&head);
            let module_ok = FACE_MAY_NAME.contains(&head.as_str());
            if !public_type && !module_ok {
                wrong.push(format!(
                    "{}: names `forgestate::{head}`; a face goes through the verb table \
                     (`forgestate::verbs`) and the public types",
                    source.rel
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        library_heads("use forgestate::client::*;\nuse forgestate::{verbs, Client};"),
        ["client", "verbs", "Client"],
        "globs and groups count"
    );
}
