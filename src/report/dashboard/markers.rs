//! Where the status table's markers really are in an issue body: on their own line, outside
//! code spans, code blocks, block quotes, lists and raw HTML blocks.
//!
//! A person's note that quotes a marker (`` `<!-- forgestate:status:begin -->` ``, a fenced or
//! indented example, a `>` quote) is their text, not the table's edge: taking it for one replaced
//! everything from the quote to the next end marker, the person's words and the
//! `Previous session issue: #N` link with them. The markdown structure comes from pulldown-cmark
//! (as the record parser's does), so "outside a code block" means what the forge renders.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Which marker a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Begin,
    End,
}

/// The byte range of the table in `body`, markers included: from the start of the first real
/// end marker's begin marker (the last real one before it) to the end of that end marker. A begin
/// marker without an end is no table (a person cut it), and the text after it is not the table's.
/// `begin` is what a begin marker's line starts with, `end` the whole end marker line.
pub(super) fn span(body: &str, begin: &str, end: &str) -> Option<(usize, usize)> {
    let mut opened = None;
    for (marker, at) in markers(body, begin, end) {
        match (marker, opened) {
            (Marker::Begin, _) => opened = Some(at),
            (Marker::End, Some(start)) => return Some((start, at + end.len())),
            (Marker::End, None) => {}
        }
    }
    None
}

/// Where the table that the last real begin marker in `body` opens ends, when a person deleted
/// its end marker: after the blocks [`super::table`] renders below that marker (the `Agents`
/// heading, then the rows or the no-records line, then the phase heading and its diagram when
/// they follow). `None` when no begin marker is left open or what follows it is not that shape:
/// the text is then the person's, and kept.
pub(super) fn orphan_span(body: &str, begin: &str, end: &str) -> Option<(usize, usize)> {
    let start = match markers(body, begin, end).last() {
        Some((Marker::Begin, at)) => *at,
        _ => return None,
    };
    let rest = body.get(start..)?;
    let blocks = top_level(rest, 5);
    let heading = |b: Option<&Block>, text: &str| {
        b.is_some_and(|b| matches!(b.kind, Kind::Heading3) && b.text.trim() == text)
    };
    let rows = |b: Option<&Block>| {
        b.is_some_and(|b| match b.kind {
            Kind::Table => true,
            Kind::Paragraph => b.text.trim() == "No records yet.",
            _ => false,
        })
    };
    let marker = blocks
        .first()
        .is_some_and(|b| b.range.start == 0 && matches!(b.kind, Kind::Html));
    if !(marker && heading(blocks.get(1), "Agents") && rows(blocks.get(2))) {
        return None;
    }
    let last = if heading(blocks.get(3), "Phases in the last day")
        && blocks.get(4).is_some_and(|b| matches!(b.kind, Kind::Code))
    {
        &blocks[4]
    } else {
        &blocks[2]
    };
    let tail = rest.get(..last.range.end)?.trim_end_matches(['\n', '\r']);
    Some((start, start + tail.len()))
}

/// The kinds of top-level block the table is made of, and any other.
enum Kind {
    Html,
    Heading3,
    Table,
    Paragraph,
    Code,
    Other,
}

/// A top-level block: its kind, where it lies, and its text.
struct Block {
    kind: Kind,
    range: Range<usize>,
    text: String,
}

/// The first `n` top-level blocks of `body`.
fn top_level(body: &str, n: usize) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut depth = 0usize;
    for (event, range) in parse(body) {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    if blocks.len() == n {
                        break;
                    }
                    let kind = match tag {
                        Tag::HtmlBlock => Kind::Html,
                        Tag::Heading {
                            level: HeadingLevel::H3,
                            ..
                        } => Kind::Heading3,
                        Tag::Table(_) => Kind::Table,
                        Tag::Paragraph => Kind::Paragraph,
                        Tag::CodeBlock(CodeBlockKind::Fenced(_)) => Kind::Code,
                        _ => Kind::Other,
                    };
                    blocks.push(Block {
                        kind,
                        range,
                        text: String::new(),
                    });
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) | Event::Code(t) => {
                if let Some(b) = blocks.last_mut() {
                    b.text.push_str(&t);
                }
            }
            _ => {}
        }
    }
    blocks
}

/// The fence (its run of backticks or tildes) of a code block `body` leaves open at its end,
/// which would swallow anything appended after it, markers included.
pub(super) fn open_fence(body: &str) -> Option<String> {
    let mut depth = 0usize;
    let mut last = None;
    for (event, range) in parse(body) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) if depth == 0 => {
                last = Some(range);
            }
            Event::Start(tag) if is_container(&tag) => depth += 1,
            Event::End(end) if is_container_end(end) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let range = last.filter(|r| r.end == body.len())?;
    let line = body.get(range.start..)?.trim_start_matches(' ');
    let c = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    Some(line.chars().take_while(|x| *x == c).collect())
}

/// Every real marker in `body`, in order, with the byte offset where its line starts.
fn markers(body: &str, begin: &str, end: &str) -> Vec<(Marker, usize)> {
    let mut depth = 0usize;
    let mut found = Vec::new();
    for (event, range) in parse(body) {
        match event {
            Event::Start(Tag::HtmlBlock) if depth == 0 => {
                found.extend(marker_at(body, range, begin, end));
            }
            Event::Start(tag) if is_container(&tag) => depth += 1,
            Event::End(end) if is_container_end(end) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    found
}

/// The marker an HTML block starting at `range` opens with, when its first line is one, whole,
/// from the first column.
fn marker_at(body: &str, range: Range<usize>, begin: &str, end: &str) -> Option<(Marker, usize)> {
    let start = body.get(..range.start)?.rfind('\n').map_or(0, |i| i + 1);
    let rest = body.get(start..)?;
    let line = rest.split('\n').next().unwrap_or(rest);
    let line = line.trim_end_matches(['\r', ' ', '\t']);
    if line == end {
        Some((Marker::End, start))
    } else if line.starts_with(begin) && line.ends_with("-->") {
        Some((Marker::Begin, start))
    } else {
        None
    }
}

fn parse(body: &str) -> impl Iterator<Item = (Event<'_>, Range<usize>)> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    Parser::new_ext(body, options).into_offset_iter()
}

/// Blocks whose content is not the body's top level: a marker inside one is quoted.
fn is_container(tag: &Tag<'_>) -> bool {
    is_container_end(tag.to_end())
}

fn is_container_end(end: TagEnd) -> bool {
    matches!(
        end,
        TagEnd::BlockQuote(_)
            | TagEnd::List(_)
            | TagEnd::Item
            | TagEnd::FootnoteDefinition
            | TagEnd::CodeBlock
            | TagEnd::Table
    )
}
