//! The Markdown stays honest: README.md and `docs/*.md` parsed with pulldown-cmark. A code block
//! that never closes (it swallows the rest of the file, headings included), a relative link to a
//! missing file or a missing heading, and a README past its 300 lines fail; `docs/cli.md` has a
//! section for every verb `--help` lists, and none for a verb that is gone.

use crate::common;
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

pub(super) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every `docs/*.md`.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    docs.extend(
        common::files_under(&root().join("docs"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    docs
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// What one document holds: its anchors, its links (target, line) and the problems found.
#[derive(Default)]
struct Doc {
    anchors: BTreeSet<String>,
    links: Vec<(String, usize)>,
    problems: Vec<String>,
}

pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The problems of one fenced block at `range`: never closed, or holding a Markdown heading
/// (the sign of a fence closed somewhere else than meant).
fn fence_problems(text: &str, range: Range<usize>, lang: &str) -> Vec<String> {
    let src = &text[range.clone()];
    let first = src.lines().next().unwrap_or("").trim_start();
    let mark: String = first
        .chars()
        .take_while(|&c| c == '`' || c == '~')
        .collect();
    let line = line_of(text, range.start);
    let mut out = Vec::new();
    let closed = src.lines().count() > 1
        && src.lines().last().is_some_and(|l| {
            let l = l.trim();
            l.starts_with(&mark) && l.chars().all(|c| c == mark.chars().next().unwrap_or('`'))
        });
    if !closed {
        out.push(format!(
            "line {line}: the {lang:?} code block opened here is never closed"
        ));
    }
    if !matches!(lang, "markdown" | "md") {
        for (i, l) in src.lines().enumerate().skip(1) {
            if l.starts_with("## ") || l.starts_with("### ") {
                out.push(format!(
                    "line {}: a heading inside the {lang:?} code block opened on line {line}: {l}",
                    line + i
                ));
            }
        }
    }
    out
}

fn read_doc(path: &Path) -> Doc {
    let text = common::read_text(path);
    let mut doc = Doc::default();
    let mut heading: Option<String> = None;
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (event, range) in Parser::new_ext(&text, Options::all()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) => {
                doc.problems
                    .extend(fence_problems(&text, range, lang.as_ref()));
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let mut anchor = base.clone();
                let mut n = 0;
                while !seen.insert(anchor.clone()) {
                    n += 1;
                    anchor = format!("{base}-{n}");
                }
                doc.anchors.insert(anchor);
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                doc.links
                    .push((dest_url.to_string(), line_of(&text, range.start)));
            }
            _ => {}
        }
    }
    doc
}

/// Every problem of every document: unclosed fences, headings in code, and relative links to a
/// missing file or heading.
pub(super) fn problems(paths: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for path in paths {
        let doc = read_doc(path);
        let name = path
            .strip_prefix(root())
            .unwrap_or(path)
            .display()
            .to_string();
        out.extend(doc.problems.iter().map(|p| format!("{name}: {p}")));
        for (dest, line) in &doc.links {
            if dest.contains("://") || dest.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = dest.split_once('#').unwrap_or((dest, ""));
            let target = if file.is_empty() {
                path.clone()
            } else {
                path.parent().unwrap_or(Path::new(".")).join(file)
            };
            if !target.exists() {
                out.push(format!(
                    "{name}: line {line}: {dest} points at a missing file"
                ));
                continue;
            }
            let is_md = target.extension().is_some_and(|e| e == "md");
            if !anchor.is_empty() && is_md && !read_doc(&target).anchors.contains(anchor) {
                out.push(format!(
                    "{name}: line {line}: {dest}: no heading makes #{anchor}"
                ));
            }
        }
    }
    out
}

#[test]
fn the_readme_and_the_docs_render_and_link_right() {
    let docs = documents();
    assert!(docs.len() >= 8, "README.md and docs/*.md: {docs:?}");
    let found = problems(&docs);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn an_unclosed_fence_a_heading_in_code_and_a_dead_link_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.md");
    std::fs::write(
        &bad,
        "# Title\n\nSee [there](missing.md) and [here](#title) and [gone](#nowhere).\n\n\
         ```console\n$ forgestate list\n\n## Python\n\nText\n",
    )
    .unwrap();
    let found = problems(std::slice::from_ref(&bad)).join("\n");
    assert!(
        found.contains("line 5: the \"console\" code block opened here is never closed"),
        "{found}"
    );
    assert!(
        found.contains("line 8: a heading inside the \"console\" code block"),
        "{found}"
    );
    assert!(
        found.contains("missing.md points at a missing file"),
        "{found}"
    );
    assert!(
        found.contains("#nowhere: no heading makes #nowhere"),
        "{found}"
    );
    assert!(
        !found.contains("#title"),
        "a heading that exists is found: {found}"
    );

    std::fs::write(&bad, "# T\n\n```sh\necho ok\n```\n\n## Next\n").unwrap();
    assert_eq!(problems(&[bad]), Vec::<String>::new());
}

#[test]
fn the_readme_is_a_front_page() {
    let text = common::read_text(&root().join("README.md"));
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move reference text to docs/"
    );
    for doc in [
        "docs/cli.md",
        "docs/format.md",
        "docs/config.md",
        "docs/forge.md",
        "docs/security.md",
        "docs/python.md",
        "docs/mcp.md",
        "docs/benchmarks.md",
    ] {
        assert!(text.contains(&format!("({doc}")), "README links {doc}");
    }
    assert!(
        !text.contains("cargo run --release -q"),
        "the quick start shows cargo's progress (no -q): the first build takes minutes"
    );
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(root().join(license).is_file(), "{license}");
    }
}

/// Every command of the binary (`common::cli::verbs()`: the table's and the CLI's own) has its
/// `### \`forgestate VERB …\`` section in `docs/cli.md`, and no section names a
/// verb that is gone.
#[test]
fn docs_cli_has_a_section_for_every_verb() {
    let verbs: BTreeSet<String> = common::cli::verbs().iter().map(|v| v.to_string()).collect();
    let text = common::read_text(&root().join("docs/cli.md"));
    let headings: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("### `forgestate "))
        .filter_map(|l| l.split([' ', '`']).next())
        .map(str::to_string)
        .collect();
    let missing: Vec<&String> = verbs.difference(&headings).collect();
    assert!(
        missing.is_empty(),
        "docs/cli.md has no ### `forgestate VERB` for {missing:?}"
    );
    let gone: Vec<&String> = headings.difference(&verbs).collect();
    assert!(
        gone.is_empty(),
        "docs/cli.md documents verbs the binary lacks: {gone:?}"
    );
}
