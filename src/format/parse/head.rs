//! What the kept beginning of a body too large to read says of it: not a record, or whose
//! record it was meant to be. Pure.

use super::marker;
use crate::format::Kind;

/// What the beginning of a body (`head`, perhaps cut short) says of it: `Some(None)` when its
/// first non-empty line cannot be a marker line (it is not a record, whatever follows),
/// `Some(Some((kind, agent)))` when that line is whole and a marker line, `None` when the
/// beginning is too short to tell (or the marker line is itself broken).
pub fn marker_in_head(head: &str) -> Option<Option<(Kind, String)>> {
    let head = head.strip_prefix('\u{feff}').unwrap_or(head);
    for line in head.split_inclusive('\n') {
        let whole = line.ends_with('\n');
        let text = line.trim_end();
        if text.is_empty() {
            match whole {
                true => continue,
                false => return None,
            }
        }
        let markers = Kind::ALL.map(Kind::marker);
        if !markers
            .iter()
            .any(|m| text.starts_with(m) || m.starts_with(text))
        {
            return Some(None);
        }
        if !whole {
            return None;
        }
        return marker(text)
            .ok()
            .map(|(kind, agent, _)| Some((kind, agent)));
    }
    None
}
