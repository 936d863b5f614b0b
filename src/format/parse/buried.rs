//! A record below other text: a body whose first non-blank line is not a marker, but a later
//! line starts with one and reads, from there, as a record (a person's note added above a
//! record, which seed 003's parser still reads), or whose marker line is indented (a person's
//! edit). Not a record here; a near miss a reader warns of. Pure.

use super::{lines, marker};
use crate::format::Kind;

/// How many later marker lines are tried: each try parses the rest of the body, so a body of
/// many marker lines costs a few parses, not one a line.
const TRIES: usize = 4;

/// Where the record below other text starts in `body` (a BOM already stripped): the 1-based
/// number of its marker line, and the kind and agent it names, when a
/// line after the first non-blank one starts with a marker, names an agent, and the body from
/// that line is a record by `reads` (the parse). `None` otherwise.
pub(super) fn buried_record(
    body: &str,
    reads: impl Fn(&str) -> bool,
) -> Option<(usize, Kind, String)> {
    let mut offset = 0;
    let mut first = true;
    let mut tries = 0;
    for (number, line) in lines(body).enumerate() {
        let at = offset;
        offset += line.len();
        // A marker line indented (spaces, a tab, a no-break space a web editor left) is one
        // too, wherever it is, the first line included; a line at the first column only below
        // the first non-blank line (that one is the record's own marker, or no marker).
        let text = line.trim_start();
        let indented = text.len() < line.len() && !text.trim_end().is_empty();
        if first && !indented {
            first = line.trim_end().is_empty();
            continue;
        }
        first = false;
        if !text.starts_with('[') || !Kind::ALL.iter().any(|k| text.starts_with(k.marker())) {
            continue;
        }
        let Ok((kind, agent, _)) = marker(text) else {
            continue;
        };
        let rest = body.get(at + line.len()..).unwrap_or_default();
        if reads(&format!("{text}{rest}")) {
            return Some((number + 1, kind, agent));
        }
        tries += 1;
        if tries == TRIES {
            return None;
        }
    }
    None
}
