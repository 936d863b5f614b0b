//! Parsing a comment body into a [`Record`], or saying exactly why it is not one.
//!
//! The layout is the seed's: a marker line, `Key: value` header lines, a fenced `json` block,
//! then a footer. Markdown structure (where the fence is) comes from pulldown-cmark; only the
//! header lines, which markdown treats as one paragraph, are read line by line.
//!
//! Leniency, all deliberate: CRLF, a BOM, trailing whitespace, unknown header lines, header keys
//! in any letter case, unknown future versions, and the seed's *unclosed* fence (its templates lost
//! the closing ```` ``` ````), where we take the first complete JSON value and ignore the rest.

use std::borrow::Cow;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;
use serde_json::value::RawValue;
use thiserror::Error;

use super::record::{Kind, Payload, Record, SEED_VERSION};
use super::session::Intent;
use super::time::parse_time;
use super::validate::HARD_MAX_BODY_BYTES;

mod intent;
mod values;

use intent::intent_data;
use values::{carried_from, clip, time_header, version_major, whole_number};

mod buried;
mod head;
use buried::buried_record;
pub use head::marker_in_head;

/// Why a comment body is not a record. Every rejection has one, so `list --invalid` can say it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// The body is over the size cap for records.
    #[error("body is {len} bytes, over the {cap}-byte cap for records")]
    TooLarge {
        /// The body's length, in bytes.
        len: usize,
        /// The cap, in bytes.
        cap: usize,
    },
    /// The first non-blank line is not a `[CHECKPOINT]`, `[HEALTH]`, `[END]` or `[TAKEOVER]`
    /// marker.
    #[error(
        "not a record: the first non-blank line does not start with [CHECKPOINT], [HEALTH], [END] \
         or [TAKEOVER]"
    )]
    NoMarker,
    /// A record below other text: the first non-blank line is not a marker, but a later line
    /// starts with one and the body from there reads as a record (a person's note added above
    /// a record, which seed 003's parser still reads), or the marker line is indented. Not read
    /// as a record: a reader warns when it is newer than its answer.
    #[error(
        "not read as a record: its {marker} line is line {line}, below other text or indented (a \
         note added above the record, or an edit?); a record's marker must start its first \
         non-blank line"
    )]
    MarkerNotFirst {
        /// The marker (`[CHECKPOINT]`, ...).
        marker: &'static str,
        /// The marker line's number in the body (1-based).
        line: usize,
    },
    /// A required header line is missing.
    #[error("record has no {field} (expected {hint})")]
    MissingField {
        /// The missing field.
        field: &'static str,
        /// What it should look like.
        hint: &'static str,
    },
    /// A header line appears twice.
    #[error("header line {header}: appears more than once")]
    DuplicateField {
        /// The repeated header.
        header: &'static str,
    },
    /// A header value is malformed.
    #[error("bad {field} {value:?}: {reason}")]
    BadField {
        /// The field.
        field: &'static str,
        /// Its value, as written.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A time is not a time this reader understands.
    #[error("bad time {value:?}: {reason}")]
    BadTime {
        /// The time, as written.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No fenced ```` ```json ```` block holds the record's data.
    #[error("no ```json code block holding the record's data")]
    NoJsonBlock,
    /// The JSON block does not parse.
    #[error("bad JSON at line {line} column {column}: {message}")]
    BadJson {
        /// The line within the block (1-based).
        line: usize,
        /// The column (1-based).
        column: usize,
        /// The JSON parser's message.
        message: String,
    },
    /// A `Version:` this reader cannot read.
    #[error("unsupported version {0:?}: expected a number such as 1.0 or 2.0")]
    UnsupportedVersion(String),
}

impl ParseError {
    /// A stable machine-readable code for `--json` output.
    pub fn code(&self) -> &'static str {
        match self {
            ParseError::TooLarge { .. } => "too_large",
            ParseError::NoMarker => "no_marker",
            ParseError::MarkerNotFirst { .. } => "marker_not_first",
            ParseError::MissingField { .. } => "missing_field",
            ParseError::DuplicateField { .. } => "duplicate_field",
            ParseError::BadField { .. } => "bad_field",
            ParseError::BadTime { .. } => "bad_time",
            ParseError::NoJsonBlock => "no_json_block",
            ParseError::BadJson { .. } => "bad_json",
            ParseError::UnsupportedVersion(_) => "unsupported_version",
        }
    }
}

/// The header lines we understand, by their canonical spelling.
const HEADERS: [&str; 21] = [
    "Version",
    "Phase",
    "Session",
    "Time",
    "Id",
    "Seq",
    "Parent",
    "Status",
    "Next check",
    "Redacted",
    "Next",
    "Context-Hash",
    "Carried-From",
    "Posted-At",
    "Edited-At",
    "Reason",
    "Intent",
    "Done",
    "Writer",
    "From",
    "By",
];

/// The one header that may repeat: each `Blocker:` line is one blocker, in order.
const BLOCKER: &str = "Blocker";

/// Parses one comment body. Never panics, whatever the input.
pub fn parse(body: &str) -> Result<Record, ParseError> {
    parse_with(body, false).map(|(record, _)| record)
}

/// Parses one comment body as [`parse`] does (the same records, the same errors), but keeps a
/// checkpoint's data or a health record's metrics as its JSON text, `null` in the record in
/// its place: for a reader that reads the data of few of the records it parses.
pub fn parse_keeping_data(body: &str) -> Result<(Record, Option<Box<RawValue>>), ParseError> {
    parse_with(body, true)
}

/// [`parse`], with the data as text when `text` says so and the kind has data.
fn parse_with(body: &str, text: bool) -> Result<(Record, Option<Box<RawValue>>), ParseError> {
    if body.len() > HARD_MAX_BODY_BYTES {
        return Err(ParseError::TooLarge {
            len: body.len(),
            cap: HARD_MAX_BODY_BYTES,
        });
    }
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    let (kind, agent, headers_start) = match marker(body) {
        Err(ParseError::NoMarker) => return Err(near_miss(body)),
        found => found?,
    };
    let block = json_block(body).ok_or(ParseError::NoJsonBlock)?;
    let mut headers = Headers::default();
    headers.read(&body[headers_start..block.fence_start])?;
    let (value, raw) = match kind {
        Kind::Checkpoint | Kind::Health if text => first_json_text(body, &block)?,
        _ => (first_json_value(body, &block)?, None),
    };

    let version = headers
        .take("Version")
        .unwrap_or_else(|| SEED_VERSION.to_string());
    let major = version_major(&version)?;
    let session = headers.require("session", "a `Session:` line")?;
    let time_text = headers.require("time", "a `Time:` line")?;
    let time = parse_time(&time_text).map_err(|reason| ParseError::BadTime {
        value: clip(&time_text),
        reason,
    })?;
    let id = headers.take("Id");
    if major == 2 && id.is_none() {
        return Err(ParseError::MissingField {
            field: "id",
            hint: "an `Id:` line in a 2.x record",
        });
    }
    let seq = whole_number(headers.take("Seq"), "seq")?;
    let parent = headers.take("Parent");
    let writer = headers.take("Writer");
    let redacted = whole_number(headers.take("Redacted"), "redacted")?;
    let next = headers.take("Next");
    let context_hash = headers.take("Context-Hash");
    let blockers = std::mem::take(&mut headers.blockers);
    let carried_from = carried_from(headers.take("Carried-From"))?;
    let posted_at = time_header(headers.take("Posted-At"), "posted-at")?;
    let edited_at = time_header(headers.take("Edited-At"), "edited-at")?;
    let intent = match headers.take("Intent") {
        Some(name) => Some(Intent {
            name,
            data: intent_data(body, block.fence_start)?,
        }),
        None => None,
    };
    let done = headers.take("Done");

    let payload = match kind {
        Kind::Checkpoint => Payload::Checkpoint {
            phase: headers.require("phase", "a `Phase:` line")?,
            data: value,
        },
        Kind::Health => {
            // The seed's unclosed fence puts `Next check:` inside the code block, after the JSON,
            // so look for it anywhere after the fence. A JSON line can never start with `N`.
            let mut trailer = Headers::default();
            trailer.read(&body[block.fence_start..])?;
            Payload::Health {
                status: headers.require("status", "a `Status:` line")?,
                metrics: value,
                next_check: headers
                    .take("Next check")
                    .or_else(|| trailer.take("Next check")),
            }
        }
        Kind::End => Payload::End {
            reason: headers.require("reason", "a `Reason:` line")?,
            note: value
                .get("note")
                .and_then(Value::as_str)
                .map(str::to_string),
        },
        Kind::Takeover => {
            if writer.is_none() {
                return Err(ParseError::MissingField {
                    field: "writer",
                    hint: "a `Writer:` line naming the new owner",
                });
            }
            Payload::Takeover {
                from: headers.take("From"),
                by: headers.take("By"),
            }
        }
    };
    let record = Record {
        version,
        id,
        seq,
        parent,
        writer,
        redacted,
        next,
        blockers,
        context_hash,
        carried_from,
        intent,
        done,
        posted_at,
        edited_at,
        agent,
        session,
        time,
        payload,
    };
    Ok((record, raw))
}

/// The kind and agent named on a body's marker line, when it has one, whether or not the rest
/// of the body reads as a record: a reader can tell whose record a broken comment meant to be.
/// For a record below other text ([`ParseError::MarkerNotFirst`]), that record's marker line.
pub fn marker_line(body: &str) -> Option<(Kind, String)> {
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    match marker(body) {
        Ok((kind, agent, _)) => Some((kind, agent)),
        Err(ParseError::NoMarker) => {
            buried_record(body, reads).map(|(_, kind, agent)| (kind, agent))
        }
        Err(_) => None,
    }
}

/// Whether `tail`, a body whose first non-blank line is a marker line, reads as a record.
fn reads(tail: &str) -> bool {
    parse_with(tail, false).is_ok()
}

/// Why `body`, whose first non-blank line is not a marker, is not a record: a record below
/// other text ([`ParseError::MarkerNotFirst`]), or none at all.
fn near_miss(body: &str) -> ParseError {
    match buried_record(body, reads) {
        Some((line, kind, _)) => ParseError::MarkerNotFirst {
            marker: kind.marker(),
            line,
        },
        None => ParseError::NoMarker,
    }
}

/// Reads the marker line. Returns the kind, the agent and where the header lines begin.
fn marker(body: &str) -> Result<(Kind, String, usize), ParseError> {
    let mut offset = 0;
    for line in lines(body) {
        offset += line.len();
        let text = line.trim_end();
        if text.is_empty() {
            continue;
        }
        let Some((kind, rest)) = (Kind::ALL.into_iter())
            .find_map(|kind| text.strip_prefix(kind.marker()).map(|rest| (kind, rest)))
        else {
            return Err(ParseError::NoMarker);
        };
        let agent = rest.trim();
        if agent.is_empty() {
            return Err(ParseError::MissingField {
                field: "agent",
                hint: "the agent name after the marker",
            });
        }
        return Ok((kind, agent.to_string(), offset));
    }
    Err(ParseError::NoMarker)
}

/// The lines of `text`, each with its line break, as `text.split_inclusive('\n')` cuts them.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut breaks = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = breaks.next().map_or(text.len(), |at| at + 1);
        // A line break (ASCII) is never inside a character.
        let line = &text[start..end];
        start = end;
        Some(line)
    })
}

/// Where the first fenced `json` block sits in the body.
struct JsonBlock<'b> {
    /// Byte offset of the opening fence line.
    fence_start: usize,
    /// Byte offset where the block's content starts (for line numbers in errors).
    content_start: usize,
    /// The block's content as markdown sees it (de-indented, up to the closing fence or the end):
    /// the body's own lines when they are the same text.
    content: Cow<'b, str>,
}

/// The first fenced `json` block: by [`plain_json_block`] when the body is plain enough for a
/// line scan to be sure, else as pulldown-cmark reads the markdown.
fn json_block(body: &str) -> Option<JsonBlock<'_>> {
    plain_json_block(body).or_else(|| markdown_json_block(body))
}

/// The json block of a body whose lines before its opening ```` ```json ```` line can open no
/// other block (no fence, HTML, quote, list, heading, table or indented line), without building
/// the markdown tree: every record forgestate and the seed render. `None` when unsure (and when
/// there is no such line): the markdown decides then. A fence opened at the line's start holds
/// its lines as written, up to a closing fence (three or more backticks, at most three spaces
/// in, nothing after) or the body's end.
fn plain_json_block(body: &str) -> Option<JsonBlock<'_>> {
    // Markdown rewrites these (line endings, NUL), so positions in its text could differ.
    if memchr::memchr2(b'\r', b'\0', body.as_bytes()).is_some() {
        return None;
    }
    let mut at = 0;
    for line in lines(body) {
        let text = line.strip_suffix('\n').unwrap_or(line);
        if text == "```json" {
            let content_start = at + line.len();
            let rest = &body[content_start..];
            let mut end = 0;
            for inner in lines(rest) {
                if closes_fence(inner) {
                    break;
                }
                end += inner.len();
            }
            return Some(JsonBlock {
                fence_start: at,
                content_start,
                content: Cow::Borrowed(&rest[..end]),
            });
        }
        let opens_nothing = text.bytes().next().is_none_or(|b| {
            !matches!(
                b,
                b' ' | b'\t'
                    | b'`'
                    | b'~'
                    | b'<'
                    | b'>'
                    | b'-'
                    | b'*'
                    | b'+'
                    | b'#'
                    | b'='
                    | b'_'
                    | b'|'
                    | b'0'..=b'9'
            )
        });
        if !opens_nothing {
            return None;
        }
        at += line.len();
    }
    None
}

/// Whether `line` closes a fence of three backticks.
fn closes_fence(line: &str) -> bool {
    // Most lines are the block's JSON: a backtick must follow at most three spaces.
    let bytes = line.as_bytes();
    let indent = bytes.iter().take(3).take_while(|&&b| b == b' ').count();
    if bytes.get(indent) != Some(&b'`') {
        return false;
    }
    let text = line.trim_end_matches('\n');
    let fence = text.trim_start_matches(' ');
    text.len() - fence.len() <= 3
        && fence.starts_with("```")
        && fence
            .trim_start_matches('`')
            .trim_matches([' ', '\t'])
            .is_empty()
}

fn markdown_json_block(body: &str) -> Option<JsonBlock<'_>> {
    let (range, content) = fenced_block(body, "json")?;
    let content_start = body[range.clone()]
        .find('\n')
        .map_or(range.end, |i| range.start + i + 1);
    Some(JsonBlock {
        fence_start: range.start,
        content_start,
        content: Cow::Owned(content),
    })
}

/// The first fenced code block of `body` whose info string's first word is `lang` (in any letter
/// case), as markdown reads it: where the block lies, and its content.
fn fenced_block(body: &str, lang: &str) -> Option<(std::ops::Range<usize>, String)> {
    let mut found: Option<(std::ops::Range<usize>, String)> = None;
    for (event, range) in Parser::new_ext(body, Options::empty()).into_offset_iter() {
        match (&mut found, event) {
            (None, Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))) => {
                let first = info.split_whitespace().next().unwrap_or("");
                if first.eq_ignore_ascii_case(lang) {
                    found = Some((range, String::new()));
                }
            }
            (Some((_, content)), Event::Text(text)) => content.push_str(&text),
            (Some(_), Event::End(TagEnd::CodeBlock)) => break,
            _ => {}
        }
    }
    found
}

/// The first complete JSON value in the block as its text, `null` in its place, when serde_json
/// reads the text as a value: it refuses a lone surrogate (`\u` escape) and nesting past its
/// limit, which its reader of text lets through; any other value, and any error, as
/// [`first_json_value`] says it.
fn first_json_text(
    body: &str,
    block: &JsonBlock,
) -> Result<(Value, Option<Box<RawValue>>), ParseError> {
    let content = block.content.as_bytes();
    let shallow = memchr::memchr2_iter(b'[', b'{', content).take(100).count() < 100;
    if shallow && !has_u_escape(content) {
        let mut stream =
            serde_json::Deserializer::from_str(&block.content).into_iter::<Box<RawValue>>();
        if let Some(Ok(raw)) = stream.next() {
            return Ok((Value::Null, Some(raw)));
        }
    }
    first_json_value(body, block).map(|value| (value, None))
}

/// Whether `text` holds a backslash followed by `u` (a `\u` escape, or what reads as one).
fn has_u_escape(text: &[u8]) -> bool {
    memchr::memchr_iter(b'\\', text).any(|at| text.get(at + 1) == Some(&b'u'))
}

/// The first complete JSON value in the block; whatever follows it is ignored.
fn first_json_value(body: &str, block: &JsonBlock) -> Result<Value, ParseError> {
    let mut stream = serde_json::Deserializer::from_str(&block.content).into_iter::<Value>();
    let base = body[..block.content_start].matches('\n').count();
    match stream.next() {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => {
            let full = e.to_string();
            let message = full
                .rsplit_once(" at line ")
                .map_or(full.as_str(), |(m, _)| m);
            Err(ParseError::BadJson {
                line: base + e.line(),
                column: e.column(),
                message: message.to_string(),
            })
        }
        None => Err(ParseError::BadJson {
            line: base + 1,
            column: 0,
            message: "the code block is empty".to_string(),
        }),
    }
}

/// Known header values found so far, by canonical name.
struct Headers {
    values: Vec<(&'static str, String)>,
    blockers: Vec<String>,
}

impl Default for Headers {
    fn default() -> Headers {
        Headers {
            // A record has about eight.
            values: Vec::with_capacity(12),
            blockers: Vec::new(),
        }
    }
}

impl Headers {
    /// Reads the `Key: value` lines of `text`: each line (as [`str::lines`] cuts them) split at
    /// its first colon; lines without one are not headers.
    fn read(&mut self, text: &str) -> Result<(), ParseError> {
        for line in lines(text) {
            let line = line.strip_suffix('\n').unwrap_or(line);
            // The colon (ASCII) is never inside a character.
            if let Some(colon) = line.bytes().position(|b| b == b':') {
                self.line(&line[..colon], &line[colon + 1..])?;
            }
        }
        Ok(())
    }

    /// One header line, cut at its first colon: a trailing `\r` is in `value` (trimmed).
    fn line(&mut self, key: &str, value: &str) -> Result<(), ParseError> {
        let key = key.trim();
        if key.eq_ignore_ascii_case(BLOCKER) {
            let value = value.trim();
            if !value.is_empty() {
                self.blockers.push(value.to_string());
            }
            return Ok(());
        }
        let Some(name) = HEADERS.iter().find(|h| h.eq_ignore_ascii_case(key)) else {
            return Ok(()); // unknown or future header lines are ignored
        };
        if self.values.iter().any(|(n, _)| n == name) {
            return Err(ParseError::DuplicateField { header: name });
        }
        self.values.push((name, value.trim().to_string()));
        Ok(())
    }

    fn take(&mut self, name: &str) -> Option<String> {
        let at = self
            .values
            .iter()
            .position(|(n, v)| n.eq_ignore_ascii_case(name) && !v.is_empty())?;
        Some(self.values.swap_remove(at).1)
    }

    /// The value of a required header, named by its field (`phase` for `Phase:`).
    fn require(&mut self, field: &'static str, hint: &'static str) -> Result<String, ParseError> {
        self.take(field)
            .ok_or(ParseError::MissingField { field, hint })
    }
}

#[cfg(test)]
mod tests {
    use super::{JsonBlock, markdown_json_block, plain_json_block};

    fn same(body: &str) {
        let key = |b: Option<JsonBlock>| {
            b.map(|b| (b.fence_start, b.content_start, b.content.into_owned()))
        };
        if let Some(plain) = key(plain_json_block(body)) {
            let markdown = key(markdown_json_block(body));
            assert_eq!(Some(plain), markdown, "{body:?}");
        }
    }

    /// The line scan finds exactly the block the markdown finds, whenever it answers: every body
    /// of up to three lines from a pool of lines that open, close or hide blocks, around a json
    /// fence, with or without its closing fence and final newline.
    #[test]
    fn the_line_scan_finds_the_block_the_markdown_finds() {
        let pool = [
            "",
            "[CHECKPOINT] w",
            "Session: s1",
            "  indented",
            "    code",
            "\tTab: x",
            "```",
            "```json",
            "~~~",
            "~~~json",
            "<div>",
            "<!-- x",
            "> quote",
            "- item",
            "* item",
            "1. one",
            "# Title",
            "===",
            "---",
            "| a | b |",
            "[x]: /url",
            "`` `json",
            "Data: `code`",
            "````",
            " ```",
            "   ```",
            "    ```",
            "``` ",
            "```json x",
            "{\"a\": 1}",
            "```` x",
        ];
        let mut count = 0;
        for a in pool {
            for b in pool {
                for c in pool {
                    for tail in ["```\n", "```", "", "   ```\nfooter\n", "````\n"] {
                        same(&format!("{a}\n{b}\n```json\n{{\"k\": [1]}}\n{c}\n{tail}"));
                        same(&format!("{a}\n```json\n{b}\n{c}\n{tail}"));
                        count += 2;
                    }
                }
            }
        }
        assert!(count > 100_000);
        // Every body forgestate renders takes the line scan.
        let renderer = crate::format::render::Renderer::embedded().unwrap();
        let data = serde_json::json!({"step": 3, "note": "a ``` fence and <b>html</b>"});
        let record = crate::format::Record::checkpoint("w", "s1", "p", data).unwrap();
        let body = renderer.render(&record).unwrap();
        assert!(plain_json_block(&body).is_some(), "{body}");
        same(&body);
        for odd in [
            "```json",
            "```json\n",
            "x\r\n```json\n{}\n```\n",
            "```json\n\0\n```",
        ] {
            same(odd);
        }
    }

    /// The header lines are read as `str::lines` and `split_once(':')` read them: the same
    /// values, blockers and errors, whatever the line endings, colons and spacing; and the
    /// lines are cut as `split_inclusive('\n')` cuts them.
    #[test]
    fn header_lines_are_read_as_lines_and_their_first_colon_say() {
        use super::{BLOCKER, HEADERS, Headers, ParseError};
        type Read = (Vec<(&'static str, String)>, Vec<String>);
        fn reference(text: &str) -> Result<Read, ParseError> {
            let (mut values, mut blockers) = (Vec::new(), Vec::new());
            for line in text.lines() {
                let Some((key, value)) = line.split_once(':') else {
                    continue;
                };
                let key = key.trim();
                if key.eq_ignore_ascii_case(BLOCKER) {
                    let value = value.trim();
                    if !value.is_empty() {
                        blockers.push(value.to_string());
                    }
                    continue;
                }
                let Some(name) = HEADERS.iter().find(|h| h.eq_ignore_ascii_case(key)) else {
                    continue;
                };
                if values.iter().any(|(n, _)| n == name) {
                    return Err(ParseError::DuplicateField { header: name });
                }
                values.push((*name, value.trim().to_string()));
            }
            Ok((values, blockers))
        }
        let pieces = [
            "Session: s1",
            "session :s2\r",
            "Time:2026-01-01T00:00:00Z:extra",
            "Blocker: a",
            "BLOCKER:",
            "\u{a0}Phase\u{3000}: p \u{a0}",
            "Phase\r: q",
            "no colon here",
            ":",
            "",
            "\r",
            "Next check: 5m\r\r",
            "Ünknown: x",
        ];
        let mut count = 0;
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    for sep in ["\n", "\r\n"] {
                        for end in ["", "\n", "\r", "\r\n"] {
                            let text = format!("{a}{sep}{b}{sep}{c}{end}");
                            let mut headers = Headers::default();
                            let got = headers
                                .read(&text)
                                .map(|()| (headers.values, headers.blockers));
                            assert_eq!(got, reference(&text), "{text:?}");
                            let cut: Vec<&str> = super::lines(&text).collect();
                            assert_eq!(cut, text.split_inclusive('\n').collect::<Vec<_>>());
                            count += 1;
                        }
                    }
                }
            }
        }
        assert!(count > 10_000);
    }

    /// The data kept as text is the data the whole parse reads, and the record and errors are
    /// the same: forgestate's own bodies, and data it would never write (a lone surrogate and
    /// nesting that serde_json's value reader refuses, spacing, repeated keys, trailing text).
    #[test]
    fn the_data_kept_as_text_is_what_the_parse_reads() {
        use super::{Payload, parse, parse_keeping_data};
        use serde_json::{Value, json};
        let renderer = crate::format::render::Renderer::embedded().unwrap();
        let datas = [
            json!({}),
            json!({"step": 3, "b": [1, 2.5, -0, 1e3, 12345678901234567890u64], "a": null}),
            json!({"note": "a ``` fence, \"quotes\", \\ and \n breaks \u{1} é 🦀", "x": {"y": [[]]}}),
        ];
        let mut bodies = Vec::new();
        for data in &datas {
            let record = crate::format::Record::checkpoint("w", "s1", "p", data.clone()).unwrap();
            bodies.push((renderer.render(&record).unwrap(), true));
            let health = crate::format::Record::health("w", "s1", "ok", data.clone(), None);
            bodies.push((renderer.render(&health.unwrap()).unwrap(), true));
        }
        let own = bodies[3].0.clone();
        let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
        let odd_data = [
            r#"{"s": "\ud800"}"#.to_string(),
            r#"{"s": "\u00e9\uD83E\uDD80"}"#.to_string(),
            deep,
            format!("{}1{}", "[".repeat(99), "]".repeat(99)),
            "{ \"a\" : [ 1 ,\t2 ] ,\r\n \"a\": \"x y\" }  trailing words".to_string(),
            r#"{"a": 1,}"#.to_string(),
            r#"{"a" 1}"#.to_string(),
            "[1, 01]".to_string(),
            "{\"a\": \"\u{1}\"}".to_string(),
            "1 2".to_string(),
            "{} {".to_string(),
            "".to_string(),
        ];
        let (open, close) = (
            own.find("```json\n").unwrap() + 8,
            own.rfind("\n```").unwrap(),
        );
        for data in &odd_data {
            bodies.push((format!("{}{data}{}", &own[..open], &own[close..]), false));
        }
        bodies.push(("[END] w\nSession: s1\nTime: 2026-01-01T00:00:00Z\nReason: done\n```json\n{\"note\": \"bye\"}\n```\n".to_string(), false));
        for (body, ours) in &bodies {
            let (whole, kept) = (parse(body), parse_keeping_data(body));
            let (whole, (mut record, text)) = match (whole, kept) {
                (Err(a), Err(b)) => {
                    assert_eq!(a, b, "{body}");
                    continue;
                }
                (Ok(a), Ok(b)) => (a, b),
                (a, b) => panic!("{body}: {a:?} against {b:?}"),
            };
            // Forgestate's own data is kept as text (but for a `\u` escape, read as a value).
            assert!(text.is_some() || !ours || body.contains("\\u"), "{body}");
            if let Some(text) = text {
                assert_eq!(record.data(), &Value::Null);
                let data: Value = serde_json::from_str(text.get()).unwrap();
                assert_eq!(&data, whole.data(), "{body}");
                match &mut record.payload {
                    Payload::Checkpoint { data: d, .. } | Payload::Health { metrics: d, .. } => {
                        *d = data
                    }
                    _ => panic!("data kept of a record without"),
                }
            }
            assert_eq!(record, whole, "{body}");
        }
    }
}
