//! The status table as markdown in the session issue's body, between two markers (pure).
//!
//! [`table`] renders the rows (agent, session, verdict, phase, resume point, last seen, next,
//! blockers), and below them the phase timeline ([`super::timeline`]), with nothing that
//! changes while the thread does not: no ages, no "generated at",
//! so an unchanged thread gives a byte-identical table and [`splice`] answers `None` (no write).
//! [`splice`] replaces only what lies between the markers; every byte outside them is kept, so a
//! person's text around the table survives, and two publishers that each re-read the body
//! before writing converge on it. A marker counts only on its own line at the body's top level
//! (`dashboard/markers.rs`): one a person quotes in a code span, a code block or a `>` quote is their text.

use super::status::StatusRow;

mod markers;

use markers::{open_fence, span};

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
            "| agent | session | verdict | phase | resume point | last seen (UTC) | next | blockers |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|\n");
        let mut rows: Vec<&StatusRow> = rows.iter().collect();
        rows.sort_by(|a, b| (&a.agent, &a.session).cmp(&(&b.agent, &b.session)));
        for r in rows {
            let cells = [
                cell(&r.agent),
                cell(&r.session),
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

/// `body` with `table` between the markers: the old table replaced, or, when the body has no
/// real markers yet, appended after a blank line. Everything outside the markers stays byte for
/// byte. `None` when the result is `body` itself (nothing to write).
pub fn splice(body: &str, table: &str) -> Option<String> {
    splice_between(body, (BEGIN_PREFIX, END), table)
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
    span(body, BEGIN_PREFIX, END).map(|(start, end)| &body[start..end])
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

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> String {
        format!("{BEGIN}\n{text}\n{END}")
    }

    #[test]
    fn splice_keeps_the_text_outside_the_markers_byte_for_byte() {
        let person = "Hello.\r\n\r\nNotes  \n";
        let first = splice(person, &t("one")).unwrap();
        assert!(first.starts_with(person));
        let edited = format!(
            "Intro\n{}\n\nOutro by a person\t\n",
            current(&first).unwrap()
        );
        let second = splice(&edited, &t("two")).unwrap();
        assert_eq!(
            second,
            format!("Intro\n{}\n\nOutro by a person\t\n", t("two"))
        );
        assert_eq!(
            splice(&second, &t("two")),
            None,
            "unchanged: nothing to write"
        );
        assert_eq!(splice("", &t("x")).unwrap(), t("x"));
        let cut = format!("{BEGIN}\nno end");
        assert!(splice(&cut, &t("x")).unwrap().starts_with(&cut));
    }

    /// A person's note quoting both markers every way markdown quotes, the chain link, and text
    /// after: none of it is the table.
    fn quoting_body() -> String {
        format!(
            "Previous session issue: #1\n\n\
             Keep `{BEGIN}` and `{END}` where the table goes.\n\n\
             ```\n{BEGIN}\nfenced example\n{END}\n```\n\n\
             ~~~~md\n{BEGIN}\n~~~\n{END}\n~~~~\n\n\
             \x20   {BEGIN}\n    indented example\n    {END}\n\n\
             > {BEGIN}\n> quoted\n> {END}\n\n\
             - {BEGIN}\n  {END}\n\n\
             \x20 {BEGIN}\n\n\
             Text after, by a person.\n"
        )
    }

    #[test]
    fn quoted_markers_are_a_persons_text_not_the_table() {
        let body = quoting_body();
        assert_eq!(current(&body), None, "no real marker pair in {body}");
        let first = splice(&body, &t("one")).unwrap();
        assert_eq!(first, format!("{body}\n{}\n", t("one")));
        assert_eq!(current(&first), Some(t("one").as_str()));
        let second = splice(&first, &t("two")).unwrap();
        assert_eq!(second, format!("{body}\n{}\n", t("two")));
        assert_eq!(splice(&second, &t("two")), None);
        // Inline, the markers are text too, even with the real table after them.
        let inline = format!("see {BEGIN} and {END} here\n\n{}\ntail\n", t("old"));
        let out = splice(&inline, &t("new")).unwrap();
        assert_eq!(
            out,
            format!("see {BEGIN} and {END} here\n\n{}\ntail\n", t("new"))
        );
    }

    #[test]
    fn the_markers_in_a_body_the_web_editor_saved_with_crlf_still_count() {
        let body = format!("Note\r\n\r\n{BEGIN}\r\nold\r\n{END}\r\nAfter\r\n");
        let out = splice(&body, &t("new")).unwrap();
        assert_eq!(out, format!("Note\r\n\r\n{}\r\nAfter\r\n", t("new")));
    }

    #[test]
    fn text_after_a_cut_begin_marker_is_not_the_tables() {
        let cut = format!("Intro\n\n{BEGIN}\nA person's text after a cut marker.\n");
        let first = splice(&cut, &t("one")).unwrap();
        assert_eq!(first, format!("{cut}\n{}\n", t("one")));
        let second = splice(&first, &t("two")).unwrap();
        assert_eq!(second, format!("{cut}\n{}\n", t("two")));
    }

    #[test]
    fn a_fence_left_open_is_closed_before_the_table_so_it_is_not_appended_again() {
        let open = "Notes\n\n````sh\nmake\n";
        let first = splice(open, &t("one")).unwrap();
        assert_eq!(first, format!("{open}````\n\n{}\n", t("one")));
        let second = splice(&first, &t("two")).unwrap();
        assert_eq!(second, format!("{open}````\n\n{}\n", t("two")));
        assert_eq!(splice(&second, &t("two")), None);
    }

    #[test]
    fn cells_cannot_break_the_table_or_the_markers() {
        let nasty = format!("a|b\nc {END} <b>");
        let c = cell(&nasty);
        assert!(!c.contains('\n') && !c.contains("<!--") && !c.contains(" | "));
        assert_eq!(
            c,
            "a\\|b c &lt;&#33;-- forgestate:status:end --&gt; &lt;b&gt;"
        );
    }

    #[test]
    fn a_backslash_cannot_unescape_a_pipe() {
        let c = cell("s1\\| completed");
        assert_eq!(c, "s1\\\\\\| completed");
        // Read as GFM reads a cell: `\\` is one backslash, `\|` a pipe; neither ends the cell.
        let mut rest = c.as_str();
        while let Some(i) = rest.find('|') {
            let before = &rest[..i];
            let run = before.len() - before.trim_end_matches('\\').len();
            assert_eq!(run % 2, 1, "an unescaped pipe in {c:?}");
            rest = &rest[i + 1..];
        }
    }

    #[test]
    fn cells_carry_no_images_links_or_mentions() {
        let c = cell("![x](http://evil/p.png) [here](http://evil) @admin");
        assert!(
            !c.contains("![") && !c.contains("[") && !c.contains('@'),
            "{c}"
        );
        assert_eq!(
            c,
            "&#33;&#91;x](http://evil/p.png) &#91;here](http://evil) &#64;admin"
        );
    }
}
