//! A record below other text: a body whose first non-blank line is not a marker, but a later
//! line starts with one and reads, from there, as a record (a person's note added above a
//! record, which seed 003's parser still reads). Not a record here; a near miss a reader warns
//! of. Pure.

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
        if first {
            first = line.trim_end().is_empty();
            continue;
        }
        if !line.starts_with('[') || !Kind::ALL.iter().any(|k| line.starts_with(k.marker())) {
            continue;
        }
        let Ok((kind, agent, _)) = marker(line) else {
            continue;
        };
        if reads(&body[at..]) {
            return Some((number + 1, kind, agent));
        }
        tries += 1;
        if tries == TRIES {
            return None;
        }
    }
    None
}
