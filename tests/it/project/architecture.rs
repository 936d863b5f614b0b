//! ARCHITECTURE.md stays a short map whose checkable claims hold: at most 12 KB; it names
//! modules, not source files, and every repository path it names exists; every room its layers
//! name is a module, and every module is in them; imports point the way the layers say (read
//! with the scanner of `layering`); every relative link resolves (the checks of `docs`).

use super::docs::{problems, root};
use super::layering::{in_binary, library_heads, reexports, sources, targets};
use crate::common;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// The most ARCHITECTURE.md may weigh, in bytes.
const MAX_BYTES: usize = 12 * 1024;

/// The beginnings that make a code span read as a path inside the repository.
const PREFIXES: &[&str] = &[
    "src/",
    "tests/",
    "docs/",
    "templates/",
    "python/",
    "examples/",
    ".ci/",
    "benches/",
    "config/",
];

fn text() -> String {
    common::read_text(&root().join("ARCHITECTURE.md"))
}

/// The layers of the `## Layers` section's code block, bottom first: one line each, its
/// modules separated by spaces.
fn layers(text: &str) -> Vec<Vec<String>> {
    let mut in_section = false;
    let mut in_heading = false;
    let mut in_block = false;
    let mut found = String::new();
    for event in Parser::new_ext(text, Options::all()) {
        match event {
            Event::Start(Tag::Heading { .. }) => in_heading = true,
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            Event::Text(t) if in_heading => in_section = t.trim() == "Layers",
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) if in_section => in_block = true,
            Event::Text(t) if in_block => found.push_str(&t),
            Event::End(TagEnd::CodeBlock) if in_block => break,
            _ => {}
        }
    }
    found
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The layer (line index) of `module` in `layers`.
fn layer_of(layers: &[Vec<String>], module: &str) -> Option<usize> {
    layers.iter().position(|l| l.iter().any(|m| m == module))
}

/// Every import that does not point down `layers`: a module importing one on its own line or
/// below it. The imports are the ones `layering` reads: `crate::` and `super::` paths, and in
/// the binary `forgestate::` paths, a re-exported type counting as its module.
fn violations(layers: &[Vec<String>]) -> Vec<String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    let types = reexports(&lib);
    let module_of = |head: String| types.get(&head).cloned().unwrap_or(head);
    let mut wrong = Vec::new();
    for source in sources() {
        let Some(own) = source.module.first() else {
            continue;
        };
        let mut heads: Vec<String> = targets(&source.code, &source.module);
        if in_binary(&source.rel) {
            heads.extend(library_heads(&source.code));
        }
        for target in heads.into_iter().map(module_of) {
            if target == *own {
                continue;
            }
            if let (Some(from), Some(to)) = (layer_of(layers, own), layer_of(layers, &target))
                && to >= from
            {
                wrong.push(format!(
                    "{}: `{own}` imports `{target}`, which the layers put {}",
                    source.rel,
                    if to == from { "beside it" } else { "above it" }
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

/// The modules declared by `src/lib.rs` and `src/main.rs`.
fn declared_modules() -> Vec<String> {
    let mut found = Vec::new();
    for file in ["src/lib.rs", "src/main.rs"] {
        let text = common::read_text(&root().join(file));
        for line in text.lines() {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "));
            if let Some(name) = rest.and_then(|r| r.strip_suffix(';')) {
                found.push(name.trim().to_string());
            }
        }
    }
    found
}

/// Every code span and code-block word of `text` that reads as a repository path.
fn repo_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_block = false;
    for event in Parser::new_ext(text, Options::all()) {
        let words: Vec<String> = match event {
            Event::Start(Tag::CodeBlock(_)) => {
                in_block = true;
                continue;
            }
            Event::End(TagEnd::CodeBlock) => {
                in_block = false;
                continue;
            }
            Event::Code(code) => vec![code.trim().to_string()],
            Event::Text(t) if in_block => t.split_whitespace().map(str::to_string).collect(),
            _ => continue,
        };
        for word in words {
            let word = word.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | '.' | '`'));
            if PREFIXES.iter().any(|p| word.starts_with(p)) {
                found.push(word.to_string());
            }
        }
    }
    found
}

#[test]
fn architecture_md_is_a_short_map() {
    let bytes = text().len();
    assert!(
        bytes <= MAX_BYTES,
        "ARCHITECTURE.md is {bytes} bytes, over {MAX_BYTES}: it is a map; move the detail to docs/"
    );
}

#[test]
fn architecture_md_names_modules_not_files_and_its_paths_exist() {
    let text = text();
    let rust_files: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | ','))
        .filter(|w| w.trim_end_matches(['.', ':', ';']).ends_with(".rs"))
        .collect();
    assert!(
        rust_files.is_empty(),
        "ARCHITECTURE.md names source files; name their modules instead: {rust_files:?}"
    );
    let missing: Vec<String> = repo_paths(&text)
        .into_iter()
        .filter(|p| !root().join(p).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn every_room_of_the_layers_is_a_module_and_every_module_is_in_them() {
    let layers = layers(&text());
    assert!(
        layers.len() >= 5,
        "no `## Layers` code block found: {layers:?}"
    );
    let named: Vec<&String> = layers.iter().flatten().collect();
    let src = root().join("src");
    let absent: Vec<&&String> = named
        .iter()
        .filter(|m| !src.join(format!("{m}.rs")).is_file() && !src.join(m).is_dir())
        .collect();
    assert!(
        absent.is_empty(),
        "the layers name rooms that are not modules: {absent:?}"
    );
    let left_out: Vec<String> = declared_modules()
        .into_iter()
        .filter(|m| !named.contains(&m))
        .collect();
    assert!(
        left_out.is_empty(),
        "modules the layers leave out: {left_out:?}"
    );
}

#[test]
fn imports_point_the_way_the_layers_say() {
    let wrong = violations(&layers(&text()));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_direction_check_finds_an_import_against_the_layers() {
    let mut upside_down = layers(&text());
    upside_down.reverse();
    let wrong = violations(&upside_down);
    assert!(
        wrong
            .iter()
            .any(|w| w.contains("`client` imports `format`")),
        "{wrong:?}"
    );
    let flat = vec![upside_down.concat()];
    assert!(
        violations(&flat).iter().any(|w| w.contains("beside it")),
        "one line for every module puts each import beside it"
    );
}

/// The sources (test code aside) of the modules for which `pick` holds, whose code contains
/// `needle`.
fn files_with(needle: &str, pick: impl Fn(&str) -> bool) -> Vec<String> {
    sources()
        .into_iter()
        .filter(|s| s.module.first().is_some_and(|m| pick(m)))
        .filter(|s| s.code.contains(needle))
        .map(|s| s.rel)
        .collect()
}

/// The rooms' claims a search can check: `fsutil` is the one atomic write (no other module
/// fsyncs a whole file), only the faces print, `client` is where a client is made, and `mcp`
/// runs tools through `verbs::cli::shown` (`verbs::call`'s run, with the CLI's text).
#[test]
fn the_rooms_claims_that_a_search_can_check_hold() {
    let faces = ["cli", "mcp", "face"];
    for (needle, allowed) in [
        ("sync_all()", &["fsutil"][..]),
        ("println!", &faces[..]),
        ("print!(", &faces[..]),
        ("io::stdout()", &faces[..]),
        ("Client::new(", &["client"][..]),
    ] {
        let found = files_with(needle, |m| !allowed.contains(&m));
        assert!(
            found.is_empty(),
            "ARCHITECTURE.md says only {allowed:?} use `{needle}`, but so do {found:?}"
        );
    }
    assert!(
        !files_with("verbs::cli::shown(", |m| m == "mcp").is_empty(),
        "mcp runs its tools through verbs::cli::shown"
    );
}

#[test]
fn every_link_in_architecture_md_resolves() {
    let found = problems(&[root().join("ARCHITECTURE.md")]);
    assert!(found.is_empty(), "{}", found.join("\n"));
}
