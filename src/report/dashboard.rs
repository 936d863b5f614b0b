//! The status table as markdown in the session issue's body, between two markers (pure).
//!
//! [`table`] renders the rows (agent, session, owner, verdict, phase, resume point, last seen,
//! next, blockers), and below them the phase timeline ([`super::timeline`]), with nothing that
//! changes while the thread does not: no ages, no "generated at",
//! so an unchanged thread gives a byte-identical table and [`splice`] answers `None` (no write).
//! [`splice`] replaces only what lies between the markers; every byte outside them is kept, so a
//! person's text around the table survives, and two publishers that each re-read the body
//! before writing converge on it. A marker counts only on its own line at the body's top level
//! (`dashboard/markers.rs`): one a person quotes in a code span, a code block or a `>` quote is their text.

use super::status::StatusRow;

mod markers;

use markers::{open_fence, orphan_span, span};

/// The line that opens the table.
pub const BEGIN: &str = "<!-- forgestate:status:begin (this table is rewritten by `forgestate status --publish`; edit outside the markers) -->";
/// The line that closes it.
pub const END: &str = "<!-- forgestate:status:end -->";
/// What a marker line starts with, whatever follows on it.
const BEGIN_PREFIX: &str = "<!-- forgestate:status:begin";

/// The table for `rows`, then `timeline` (a [`super::timeline::gantt`] block) when there is one,
/// as the markdown between the markers (markers included).
pub fn table(rows: &[StatusRow], timeline: Option<&str>) -> String {
    let mut out = String::new();
    out.push_str(BEGIN);
    out.push_str("\n\n### Agents\n\n");
    if rows.is_empty() {
        out.push_str("_No records yet._\n");
    } else {
        out.push_str(
            "| agent | session | owner | verdict | phase | resume point | last seen (UTC) | next | blockers |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|\n");
        let mut rows: Vec<&StatusRow> = rows.iter().collect();
        rows.sort_by(|a, b| (&a.agent, &a.session).cmp(&(&b.agent, &b.session)));
        for r in rows {
            let cells = [
                cell(&r.agent),
                cell(&r.session),
                cell(&owner(r)),
                r.verdict.name().to_string(),
                cell(r.phase.as_deref().unwrap_or("")),
                cell(r.resume_point.as_deref().unwrap_or("")),
                r.last_seen.format("%Y-%m-%d %H:%M:%S").to_string(),
                cell(r.next.as_deref().unwrap_or("")),
                cell(&r.blockers.join("; ")),
            ];
            out.push_str("| ");
            out.push_str(&cells.join(" | "));
            out.push_str(" |\n");
        }
    }
    if let Some(timeline) = timeline {
        out.push_str("\n### Phases in the last day\n\n");
        out.push_str(timeline);
    }
    out.push('\n');
    out.push_str(END);
    out
}

/// `body` with `table` between the markers: the old table replaced where it stands, or, when
/// the body has no real markers yet, put at the top, above the template and a blank line (where
/// people look first, as Renovate's Dependency Dashboard). Everything outside the markers stays
/// byte for byte. `None` when the result is `body` itself (nothing to write).
/// A table whose end marker a person deleted is still the table, as far as its rendered blocks
/// reach: it is replaced, not left behind as text under a new one.
pub fn splice(body: &str, table: &str) -> Option<String> {
    let out = match table_span(body) {
        Some((start, end)) => format!("{}{table}{}", &body[..start], &body[end..]),
        None if body.trim().is_empty() => table.to_string(),
        None => format!("{table}\n\n{body}"),
    };
    (out != body).then_some(out)
}

/// Where the status table lies in `body`: between its markers, or, when a person deleted the
/// end marker, from the begin marker to the end of the blocks the table is made of.
fn table_span(body: &str) -> Option<(usize, usize)> {
    span(body, BEGIN_PREFIX, END).or_else(|| orphan_span(body, BEGIN_PREFIX, END))
}

/// [`splice`] for any pair of markers: `block` (markers included) in place of the text from the
/// line starting with `markers.0` to the line `markers.1`, or appended when `body` has none.
pub fn splice_between(body: &str, markers: (&str, &str), block: &str) -> Option<String> {
    let out = match span(body, markers.0, markers.1) {
        Some((start, end)) => format!("{}{block}{}", &body[..start], &body[end..]),
        None if body.trim().is_empty() => block.to_string(),
        None => append(body, markers, block),
    };
    (out != body).then_some(out)
}

/// `body`, a blank line, then `table`. When `body` ends inside a code fence a person left open,
/// the table would be part of the code (and the next publish would append another): the fence is
/// closed first, on a line of its own after `body`.
fn append(body: &str, markers: (&str, &str), table: &str) -> String {
    let sep = if body.ends_with("\n\n") {
        ""
    } else if body.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    let plain = format!("{body}{sep}{table}\n");
    let at = body.len() + sep.len();
    if span(&plain, markers.0, markers.1) == Some((at, at + table.len())) {
        return plain;
    }
    match open_fence(body) {
        Some(fence) => {
            let nl = if body.ends_with('\n') { "" } else { "\n" };
            format!("{body}{nl}{fence}\n\n{table}\n")
        }
        None => plain,
    }
}

/// The table `body` holds between its markers, markers included, when it has one.
pub fn current(body: &str) -> Option<&str> {
    table_span(body).map(|(start, end)| &body[start..end])
}

/// The owner cell: the writer that took the session over, and how many records it fenced.
fn owner(r: &StatusRow) -> String {
    match (&r.owner, r.fenced) {
        (Some(owner), 0) => owner.clone(),
        (Some(owner), n) => format!("{owner} ({n} fenced)"),
        (None, _) => String::new(),
    }
}

/// One table cell: no line breaks, no `|` that would split it, no `<` that could open a
/// comment or a marker, nothing longer than a screen.
fn cell(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    // No markup from a record reaches the body: no tags, images, links or @mentions.
    // A backslash is escaped first, so a `\|` in a name cannot turn the escaped pipe back into
    // a cell border (`\\|` is a literal backslash, then the end of the cell).
    flat.replace('\\', "\\\\")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('[', "&#91;")
        .replace('!', "&#33;")
        .replace('@', "&#64;")
        .trim()
        .to_string()
}
