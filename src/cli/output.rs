//! Everything the CLI prints: one JSON document with `--json`, readable text without.
//!
//! Only this module writes to stdout. Writes ignore a closed pipe (`forgestate list | head`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use super::{table, terminal};

mod select;
pub use select::{Selection, check_fields, set as set_selection};

/// Set once a JSON document is on stdout, so a later failure does not print a second one.
static PRINTED: AtomicBool = AtomicBool::new(false);

/// Prints a value as one pretty JSON document on stdout.
///
/// **Key order, for every verb: the typed answer's declaration order**; every document is a typed struct, so no verb
/// prints sorted keys where another does not. Keys of plain JSON objects inside (a record's
/// `data` and `metrics`, a flush's entries) are sorted, as serde_json keeps them. MCP's
/// `structuredContent` is the same answer as a `serde_json::Value`, whose keys are sorted.
///
/// With `--json=FIELDS` or `--jq`, only the selected part is printed (`select.rs`); a field the
/// answer lacks or a failing expression prints nothing and is kept for [`select_failed`] (a
/// usage error), except after a verb that may have changed something: its changes stand, so
/// the failure is a warning and the whole answer is printed (the saved record's id with it).
pub fn json<T: Serialize>(value: &T) {
    selected(document(value, serde_json::to_string_pretty));
}

/// [`json`] for forgestate's own text (completion scripts, man pages), printed as it is: it
/// holds no record, and the scrubber's shapes would mangle a flag's description
/// (`--token-file=[…]` in a zsh script).
pub fn json_page<T: Serialize>(value: &T) {
    selected(
        serde_json::to_string_pretty(value)
            .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string())),
    );
}

/// Prints the part of `text` that `--json=FIELDS` or `--jq` selects.
fn selected(text: String) {
    match select::apply(&text) {
        Ok(text) => {
            PRINTED.store(true, Ordering::Relaxed);
            write(&text);
        }
        Err(message) if select::writes() => {
            leveled(
                "warning",
                &format!(
                    "{message}; the command's changes stand (do not run it again), so the whole \
                 answer is printed instead"
                ),
            );
            PRINTED.store(true, Ordering::Relaxed);
            write(&text);
        }
        Err(message) => {
            let _ = SELECT_FAILED.set(message);
        }
    }
}

/// [`json`] without the selection: the whole document (error documents).
pub fn json_whole<T: Serialize>(value: &T) {
    let text = document(value, serde_json::to_string_pretty);
    PRINTED.store(true, Ordering::Relaxed);
    write(&text);
}

/// A value as one compact JSON line on stdout (`watch --json`, `forgestate call --lines`).
pub fn json_line<T: Serialize>(value: &T) {
    write(&document(value, serde_json::to_string));
}

/// The JSON text of an answer, scrubbed: the one scrub at the answer's boundary for every
/// document the CLI prints (warnings, names and data alike; `face::scrub::scrub_json`).
fn document<T: Serialize>(value: &T, encode: fn(&T) -> serde_json::Result<String>) -> String {
    let text = encode(value).unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    crate::face::scrub::scrub_json(&text)
}

static SELECT_FAILED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

pub fn select_failed() -> Option<&'static str> {
    SELECT_FAILED.get().map(String::as_str)
}

pub fn printed() -> bool {
    PRINTED.load(Ordering::Relaxed)
}

/// Writes human text and a newline to stdout, scrubbed like every line forgestate writes: a
/// human answer passes the same scrub as its JSON document.
pub fn out(text: &str) {
    write(&crate::face::scrub::scrub(text));
}

/// forgestate's own text (help, completion scripts, man pages) on stdout as it is; see
/// [`json_page`].
pub fn page(text: &str) {
    write(text);
}

/// Writes text and a newline to stdout as it is (JSON, scrubbed by [`document`]).
fn write(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let written = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        // A closed pipe (`forgestate list | head`) is fine; a full disk is not.
        let _ = WRITE_FAILED.set(e.to_string());
    }
}

/// Set when stdout could not be written (other than a closed pipe): the answer was lost.
static WRITE_FAILED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

pub fn write_failed() -> Option<&'static str> {
    WRITE_FAILED.get().map(String::as_str)
}

/// A human message on stderr, prefixed like every forgestate message. A text that starts with
/// `error: ` or `warning: ` gets that level's prefix (coloured when stderr may be). Scrubbed
/// and made printable (`face::scrub::printable`): a warning may quote a record's agent, session,
/// phase or a reason, whose escapes must not reach the terminal.
pub fn note(text: &str) {
    for level in ["error", "warning"] {
        if let Some(rest) = text.strip_prefix(level).and_then(|t| t.strip_prefix(": ")) {
            return leveled(level, rest);
        }
    }
    let text = crate::face::scrub::printable(text);
    super::progress::suspend(|| writeln!(std::io::stderr().lock(), "forgestate: {text}")).ok();
}

/// `forgestate: error: {text}` on stderr.
pub fn error(text: &str) {
    leveled("error", text);
}

fn leveled(level: &str, text: &str) {
    let prefix = table::prefix(level, terminal::stderr_color());
    let text = crate::face::scrub::printable(text);
    super::progress::suspend(|| writeln!(std::io::stderr().lock(), "{prefix}{text}")).ok();
}

/// Text on stderr as it is (clap's usage lines after its error line).
pub fn raw_err(text: &str) {
    let text = crate::face::scrub::scrub(text);
    super::progress::suspend(|| writeln!(std::io::stderr().lock(), "{text}")).ok();
}
