//! ARCHITECTURE.md stays a map, not a manual: at most 20 KB, every file it names exists (a
//! repository path in backticks or in a code block, and a bare `name.rs` under a heading that
//! names its directory), and every relative link resolves (the checks of `docs.rs`). Detail
//! belongs in `docs/`, and lists the code owns are left to the code.

use super::docs::{line_of, problems, root};
use crate::common;
use std::path::Path;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The most ARCHITECTURE.md may weigh, in bytes.
const MAX_BYTES: usize = 20 * 1024;

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

/// The repository path `word` names, if it names one: a known prefix, then path characters.
/// A `#anchor` and trailing punctuation are dropped.
fn as_repo_path(word: &str) -> Option<&str> {
    let word = word.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | ':' | '.' | '`'));
    let word = word.split('#').next().unwrap_or(word);
    PREFIXES.iter().any(|p| word.starts_with(p)).then_some(word)
}

/// A file the document names: the paths it may be (one for a repository path; one per directory
/// of its section's heading for a bare `name.rs`), as written, and its line.
#[derive(Debug)]
struct Named {
    candidates: Vec<String>,
    written: String,
    line: usize,
}

/// A bare file or directory name as a code map writes it under its directory's heading
/// (`record.rs`, `local/delta.rs`, `output/`), not a type, flag or command.
fn is_bare_name(code: &str) -> bool {
    let file = [".rs", ".py", ".md", ".toml", ".sh"]
        .iter()
        .any(|ext| code.ends_with(ext));
    let dir = code.ends_with('/') && code.len() > 1;
    (file || dir)
        && !code.starts_with('.')
        && code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
}

/// The directories a heading's repository paths name: each directory, and each file's parent.
fn heading_dirs(paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .map(|p| match p.strip_suffix('/') {
            Some(dir) => format!("{dir}/"),
            None => p
                .rfind('/')
                .map_or(String::new(), |at| p[..=at].to_string()),
        })
        .collect()
}

/// Every file the document names, with its line: each inline code span that is a repository
/// path, each bare name under a heading that names directories, and each path-looking word
/// inside a code block.
fn named_paths(text: &str) -> Vec<Named> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut in_heading = false;
    let mut heading_paths: Vec<String> = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::all()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_block = true,
            Event::End(TagEnd::CodeBlock) => in_block = false,
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                heading_paths.clear();
            }
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            Event::Code(code) => {
                let code = code.trim();
                let line = line_of(text, range.start);
                if let Some(path) = as_repo_path(code).filter(|p| !p.contains(' ')) {
                    if in_heading {
                        heading_paths.push(path.to_string());
                    }
                    out.push(Named {
                        candidates: vec![path.to_string()],
                        written: path.to_string(),
                        line,
                    });
                } else if !in_heading && !heading_paths.is_empty() && is_bare_name(code) {
                    out.push(Named {
                        candidates: heading_dirs(&heading_paths)
                            .iter()
                            .map(|dir| format!("{dir}{code}"))
                            .collect(),
                        written: code.to_string(),
                        line,
                    });
                }
            }
            Event::Text(block) if in_block => {
                for word in block.split_whitespace() {
                    if let Some(path) = as_repo_path(word) {
                        // A block's text is verbatim: the word's offset in it is its offset in
                        // the document, from where the text starts.
                        let at = range.start + (word.as_ptr() as usize - block.as_ptr() as usize);
                        out.push(Named {
                            candidates: vec![path.to_string()],
                            written: path.to_string(),
                            line: line_of(text, at),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether `path` exists under `base`. A glob (`src/**/*.rs`) must have its fixed directory
/// part.
fn exists(base: &Path, path: &str) -> bool {
    let fixed = match path.find(['*', '?', '{', '<']) {
        Some(at) => &path[..path[..at].rfind('/').map_or(0, |s| s + 1)],
        None => path,
    };
    base.join(fixed).exists()
}

/// The named files that do not exist under `base`.
fn missing_paths(base: &Path, text: &str) -> Vec<String> {
    named_paths(text)
        .into_iter()
        .filter(|n| !n.candidates.iter().any(|c| exists(base, c)))
        .map(|n| format!("line {}: `{}` does not exist", n.line, n.written))
        .collect()
}

#[test]
fn architecture_md_is_a_short_map() {
    let path = root().join("ARCHITECTURE.md");
    let bytes = std::fs::metadata(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len() as usize;
    assert!(
        bytes <= MAX_BYTES,
        "ARCHITECTURE.md is {bytes} bytes, over {MAX_BYTES}: it is a map; move the detail to docs/"
    );
}

#[test]
fn every_file_architecture_md_names_exists() {
    let text = common::read_text(&root().join("ARCHITECTURE.md"));
    let named = named_paths(&text);
    assert!(
        named.len() >= 30,
        "ARCHITECTURE.md names only {} repository paths; is the scanner reading it? {named:?}",
        named.len()
    );
    let missing = missing_paths(&root(), &text);
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names files that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_link_in_architecture_md_resolves() {
    let found = problems(&[root().join("ARCHITECTURE.md")]);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_path_check_finds_a_missing_file_in_a_span_and_in_a_block() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/store")).unwrap();
    std::fs::write(dir.path().join("src/store/mod.rs"), "").unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    let text = "# Map\n\n`src/store/mod.rs`, `src/store/gone.rs`, `docs/none.md#anchor`,\n\
                `src/**/*.rs`, `tests/nowhere/**/*.rs`, `Thread`, `--json`.\n\n\
                ```\nCLI (src/cli) ─> store (src/store)\n```\n\n\
                ### `src/store/` and `src/lib.rs`\n\n\
                `mod.rs`, `lib.rs`, `local.rs`, `x::y`, `thread.jsonl`.\n\n\
                ## Concerns\n\n`delta.rs` is not under a directory.\n";
    let missing = missing_paths(dir.path(), text);
    assert_eq!(
        missing,
        [
            "line 3: `src/store/gone.rs` does not exist",
            "line 3: `docs/none.md` does not exist",
            "line 4: `tests/nowhere/**/*.rs` does not exist",
            "line 7: `src/cli` does not exist",
            "line 12: `local.rs` does not exist",
        ],
        "{missing:?}"
    );
}
