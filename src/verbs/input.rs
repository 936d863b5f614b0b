//! Checking a verb's request: JSON objects given as objects or as JSON text, globs, times and
//! ages, context files. Every face (CLI, MCP, Python) gets the same checks and the same words;
//! `what` names the argument as the face calls it (`data`, `--data`).

use std::io::Read;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::format::parse_time;

#[cfg(feature = "cli")]
mod read;
mod unique;
#[cfg(feature = "cli")]
pub use read::{apply_sets, read_text};
pub use unique::{Repeated, repeated_key};

/// A JSON object argument. Some clients send nested objects as JSON text: a string is parsed.
pub fn object_or_text(what: &str, value: Value) -> Result<Map<String, Value>> {
    match value {
        Value::String(text) => json_object(what, &text),
        value => object(what, value),
    }
}

/// A JSON object given as text. A key given twice in one object is refused: serde_json would
/// keep one of the values without a word.
pub fn json_object(what: &str, text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => match repeated_key(text) {
            Some(repeated) => Err(Error::invalid(repeated.describe(what))),
            None => object(what, value),
        },
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            Err(Error::invalid(format!(
                "{what} nests too deeply ({e}); forgestate reads a value at most 127 levels \
                 deep: store it flatter"
            )))
        }
        Err(e) => Err(Error::invalid(format!(
            "{what} is not valid JSON (it must be a JSON object, or the JSON text of one): {e}"
        ))),
    }
}

/// A JSON value that must be an object.
pub fn object(what: &str, value: Value) -> Result<Map<String, Value>> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Error::invalid(format!(
            "{what} must be a JSON object such as '{{\"issue_number\": 42}}'"
        ))),
    }
}

/// The request fields that name an agent, a session or a phase (or match them, as a glob): each
/// is at most [`crate::format::MAX_FIELD_CHARS`] characters on every face, checked before any
/// IO, so a huge glob costs nothing (it cost seconds and gigabytes, and the wait budget).
pub const NAME_FIELDS: &[&str] = &["agent", "session", "phase", "new_session", "writer"];

/// A name or glob given in a request (`what`, one of [`NAME_FIELDS`]) longer than any record's
/// name can be is a usage error.
pub fn name_length(what: &str, value: &str) -> Result<()> {
    let limit = crate::format::MAX_FIELD_CHARS;
    // Counted only as far as the limit: the value may be megabytes long.
    match value.chars().nth(limit) {
        None => Ok(()),
        Some(_) => Err(Error::usage(format!(
            "{what} is {} characters long; the limit is {limit}",
            value.chars().count()
        ))),
    }
}

/// Every [`NAME_FIELDS`] argument of a JSON request checked by [`name_length`].
pub fn name_lengths(args: &Value) -> Result<()> {
    for field in NAME_FIELDS {
        if let Some(value) = args.get(field).and_then(Value::as_str) {
            name_length(field, value)?;
        }
    }
    Ok(())
}

/// A filter argument must be a valid glob (`*`, `?`, `[abc]`) no longer than a name
/// ([`name_length`]); `[[]` matches `[`. A NUL is refused as bad data: no name holds one, and no
/// command line can pass one.
pub fn check_glob(what: &str, value: Option<&str>) -> Result<()> {
    if let Some(value) = value {
        name_length(what, value)?;
    }
    if value.is_some_and(|v| v.contains('\0')) {
        return Err(Error::invalid(format!(
            "{what} holds a NUL character, which no agent or session name can; pass the name \
             as text without NUL characters"
        )));
    }
    match value.map(glob::Pattern::new) {
        Some(Err(e)) => Err(Error::usage(format!(
            "{what} {:?} is not a valid glob: {e}; write [[] to match a literal [",
            value.unwrap_or_default()
        ))),
        _ => Ok(()),
    }
}

/// A `since` argument as given: a time, or an age to count back on the store's clock (see
/// `Client::list_since`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// An RFC 3339 time.
    At(DateTime<Utc>),
    /// An age.
    Age(chrono::Duration),
}

impl Since {
    /// The filter's fixed time and the age, one of them set.
    pub fn split(since: Option<Since>) -> (Option<DateTime<Utc>>, Option<chrono::Duration>) {
        match since {
            Some(Since::At(t)) => (Some(t), None),
            Some(Since::Age(age)) => (None, Some(age)),
            None => (None, None),
        }
    }
}

/// Reads a `since` argument, an RFC 3339 time or an age (`90m`, `24h`, `7d`, `1h 30m`), without
/// deciding the clock an age is counted on.
pub fn since_arg(what: &str, text: &str) -> Result<Since> {
    if let Ok(t) = parse_time(text) {
        return Ok(Since::At(t));
    }
    let age = parse_age(text).ok_or_else(|| {
        Error::usage(format!(
            "{what} {text:?} is neither an RFC 3339 time (2026-11-29T08:00:00Z) nor an age \
             (24h, 7d)"
        ))
    })?;
    chrono::Duration::try_seconds(i64::try_from(age).unwrap_or(i64::MAX))
        .filter(|age| Utc::now().checked_sub_signed(*age).is_some())
        .map(Since::Age)
        .ok_or_else(|| Error::usage(format!("{what} {text:?} reaches too far back")))
}

/// A JSON flag's value (`--intent-data '{"branch": "fix-42"}'`): any JSON.
pub fn json_flag(text: &str) -> std::result::Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))
}

/// A duration flag's value (`--warn-after 10m`, or `600` seconds) as its `*_secs` field: whole
/// seconds. Zero is taken, as `call` and MCP take it (`--stalled-after 0`: every session is
/// stalled at once); a fraction of a second is not.
pub fn duration_flag(text: &str) -> std::result::Result<u64, String> {
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(secs);
    }
    match humantime::parse_duration(text) {
        Ok(d) if d.subsec_nanos() == 0 && text.trim() == text => Ok(d.as_secs()),
        _ => Err(format!(
            "{text:?} is not a duration in whole seconds; write it as 90s, 10m or 2h"
        )),
    }
}

/// A duration flag's value (`--interval 500ms`) as its `*_ms` field: whole milliseconds, at
/// least one (a shorter pause is no pause).
pub fn millis_flag(text: &str) -> std::result::Result<u64, String> {
    match humantime::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)),
        Ok(_) => Err(format!("{text:?} is no pause; write it as 5s or 500ms")),
        Err(e) => Err(format!(
            "{text:?} is not a duration ({e}); write it as 5s or 500ms"
        )),
    }
}

/// An age in whole seconds: one or more `<number><unit>` parts (`s`, `m`, `h`, `d`, `w`, and
/// their long names), optionally separated by spaces.
pub fn parse_age(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600,
            "d" | "day" | "days" => 86_400,
            "w" | "week" | "weeks" => 604_800,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
        rest = rest[unit_len..].trim_start();
    }
    Some(total)
}

/// The bytes of a context file (the status document an agent works from), for its hash: a
/// regular file of up to 64 MiB. It is opened non-blocking and its type checked on the handle,
/// so a FIFO with no writer, a device such as `/dev/zero` or a directory is refused at once
/// instead of hanging the verb or being read forever.
pub fn context_file(what: &str, path: &Path) -> Result<Vec<u8>> {
    const CAP: u64 = 64 * 1024 * 1024;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let action = format!("cannot read {what}");
    let file = options
        .open(path)
        .map_err(|e| Error::io(action.clone(), path, e))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(action.clone(), path, e))?;
    if !meta.is_file() {
        return Err(Error::NotAFile {
            message: format!(
                "{what} {} is not a regular file (a FIFO, a device or a directory); point it at \
                 the status document the agent works from (STATUS.md)",
                path.display()
            ),
        });
    }
    let mut bytes = Vec::new();
    file.take(CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(action, path, e))?;
    if bytes.len() as u64 > CAP {
        return Err(Error::invalid(format!(
            "{what} {} is over 64 MiB; point it at the status document the agent works from \
             (STATUS.md), not at data",
            path.display()
        )));
    }
    Ok(bytes)
}

/// A record id given to a verb (`checkpoint`'s `id`, `prune`'s `ids`): a UUID in its hyphenated
/// form (as [`crate::format::new_record_id`] writes it), kept as given. The text is not echoed when it
/// is not one: it may be anything, a secret pasted by mistake included.
pub fn record_id(what: &str, text: String) -> Result<String> {
    match crate::format::is_record_id(&text) {
        true => Ok(text),
        false => Err(Error::usage(format!(
            "{what} is not a record id; give a UUID such as \
             01a232d2-6f5a-743e-b1a3-fe4349829487 (a record's id, as list and resume print it)"
        ))),
    }
}

/// Checks a name given in a request that a record's header would carry (`agent`, `session`,
/// `writer`): one line of printable text, refused as the same value in a record is (a data
/// error, exit 65). A name no record can hold must not read as "no record yet".
pub fn header(field: &'static str, value: &str) -> Result<()> {
    crate::format::check_field(field, value)
        .map_err(|e| Error::from(crate::format::BuildError::Field(e)))
}
