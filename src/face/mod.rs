//! What both faces of the binary (the CLI and the MCP server) share: exit codes by who must act,
//! the error document (`{"error": {"code", "category", "message"}}`), one-line messages, the
//! capped reading of an input line, and the scrubber every line that leaves the process passes
//! through. Neither face imports the other.

pub mod deep;
pub mod line;
pub mod scrub;

use serde::Serialize;
use serde_json::Value;

use forgestate::resume::edit_distance;
use forgestate::{Category, Error};

/// Exit 64: the command line or a request was malformed.
pub const EX_USAGE: u8 = 64;
/// Exit 65: bad input data.
pub const EX_DATAERR: u8 = 65;
/// Exit 73: a compare-and-set write (`checkpoint --if-latest`) was refused: the session moved on
/// since the record named; nothing was posted.
pub const EX_CONFLICT: u8 = 73;
/// Exit 74: a local file could not be read or written.
pub const EX_IOERR: u8 = 74;
/// Exit 75: try again later (`--strict` and a spooled record; a forge that cannot be read).
pub const EX_TEMPFAIL: u8 = 75;
/// Exit 78: the configuration is wrong.
pub const EX_CONFIG: u8 = 78;

/// The category named in the error document for each exit code.
pub fn category(code: u8) -> &'static str {
    match code {
        EX_USAGE => "usage",
        EX_DATAERR => "data",
        EX_TEMPFAIL => "tempfail",
        EX_CONFIG => "config",
        EX_CONFLICT => "conflict",
        _ => "io",
    }
}

/// The exit code for a library error, by who must act.
pub fn exit_code(e: &Error) -> u8 {
    match e.category() {
        Category::Data => EX_DATAERR,
        Category::Io => EX_IOERR,
        Category::Config => EX_CONFIG,
        Category::TempFail => EX_TEMPFAIL,
        Category::Usage => EX_USAGE,
        Category::Conflict => EX_CONFLICT,
        _ => EX_IOERR,
    }
}

/// The `error` object, the same for every verb and face.
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    /// The exit code.
    pub code: u8,
    /// Who must act: `usage`, `data`, `io`, `tempfail`, `config`, `conflict`.
    pub category: &'static str,
    /// The message on one line.
    pub message: String,
    /// Why a comment is not a record (`parse` only): `no_marker`, `missing_field`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ErrorBody {
    /// The error object for `message` (scrubbed, on one line) with exit code `code`.
    pub fn new(code: u8, message: &str) -> ErrorBody {
        ErrorBody {
            code,
            category: category(code),
            message: one_line(&scrub::scrub(message)),
            reason: None,
        }
    }

    /// The error object of a library error; a body that is not a record says why in `reason`.
    pub fn of(e: &Error) -> ErrorBody {
        match e {
            Error::Parse(p) => {
                let reason = p.to_string();
                let message = match reason.starts_with("not a record") {
                    true => reason,
                    false => format!("not a record: {reason}"),
                };
                ErrorBody {
                    reason: Some(p.code().to_string()),
                    ..ErrorBody::new(exit_code(e), &message)
                }
            }
            e => ErrorBody::new(exit_code(e), &e.to_string()),
        }
    }
}

/// A verb's answer carries the error object too (`flush`'s, of an outbox that still holds
/// records).
impl From<ErrorBody> for forgestate::verbs::FlushError {
    fn from(body: ErrorBody) -> Self {
        forgestate::verbs::FlushError {
            code: body.code,
            category: body.category.to_string(),
            message: body.message,
            reason: body.reason,
        }
    }
}

/// A message on one line: lines joined with "; ", dropping the source excerpts some parsers
/// draw under their message (`1 | [locall]`, `  |  ^^^^`).
pub fn one_line(message: &str) -> String {
    let excerpt = |l: &str| {
        let rest = l
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        rest.starts_with('|')
    };
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !excerpt(l))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Where the JSON string literal opening at `start` ends: just past its closing quote, or the
/// end of `text` when it is not closed.
pub fn string_end(text: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < text.len() {
        match text[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    text.len()
}

/// The names (verbs, tools) a mistyped `typed` may have meant: those it begins (`stat` → `status`), else those
/// within two edits, closest first.
pub fn suggest<'a>(typed: &str, verbs: &[&'a str]) -> Vec<&'a str> {
    let prefixed: Vec<&str> = verbs
        .iter()
        .copied()
        .filter(|v| typed.len() >= 2 && v.starts_with(typed))
        .collect();
    if !prefixed.is_empty() {
        return prefixed;
    }
    let mut close: Vec<(usize, &str)> = verbs
        .iter()
        .map(|v| (edit_distance(typed, v), *v))
        .filter(|&(d, _)| d <= 2)
        .collect();
    close.sort();
    close.into_iter().map(|(_, v)| v).collect()
}

/// The hint after a name nothing answers to: "did you mean X?" or "did you mean one of X, Y?"
/// naming the close names ([`suggest`]) as `quote` writes them, else `otherwise`.
pub fn did_you_mean(
    typed: &str,
    names: &[&str],
    quote: impl Fn(&str) -> String,
    otherwise: &str,
) -> String {
    let close: Vec<String> = suggest(typed, names).into_iter().map(quote).collect();
    match close.as_slice() {
        [] => otherwise.to_string(),
        [one] => format!("did you mean {one}?"),
        many => format!("did you mean one of {}?", many.join(", ")),
    }
}

/// The `id` of a message that could not be parsed whole (truncated, too long, a bad string
/// somewhere): the value of the top-level key `id`, when it is a string, number or null and comes
/// before the damage. `null` otherwise.
pub fn top_level_id(text: &[u8]) -> Value {
    let (mut level, mut at) = (0usize, 0usize);
    while at < text.len() {
        match text[at] {
            b'"' => {
                let end = string_end(text, at);
                if level == 1 && &text[at..end] == b"\"id\"" {
                    let rest = &text[end..];
                    let colon = rest.iter().position(|b| !b.is_ascii_whitespace());
                    if colon.is_some_and(|c| rest[c] == b':') {
                        return id_value(&rest[colon.unwrap_or(0) + 1..]);
                    }
                }
                at = end;
                continue;
            }
            b'[' | b'{' => level += 1,
            b']' | b'}' => level = level.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    Value::Null
}

/// The JSON value at the start of `rest`, when it is a plain id (string, number, null).
fn id_value(rest: &[u8]) -> Value {
    let start = rest
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let rest = &rest[start..];
    let end = match rest.first() {
        Some(b'"') => string_end(rest, 0),
        Some(_) => rest
            .iter()
            .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
            .unwrap_or(rest.len()),
        None => 0,
    };
    match serde_json::from_slice::<Value>(&rest[..end]) {
        Ok(v @ (Value::String(_) | Value::Number(_) | Value::Null)) => v,
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_fit_on_one_line() {
        let toml = "config file x.toml: TOML parse error at line 1, column 2\n  |\n1 | [locall]\n  |  \
                    ^^^^^^\nunknown field `locall`\n";
        assert_eq!(
            one_line(toml),
            "config file x.toml: TOML parse error at line 1, column 2; unknown field `locall`"
        );
        assert_eq!(one_line("plain"), "plain");
    }
}
