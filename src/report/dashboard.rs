//! The status table as markdown in the session issue's body, between two markers (pure).
//!
//! [`table`] renders the rows (agent, session, verdict, phase, resume point, last seen, next,
//! blockers), and below them the phase timeline ([`super::timeline`]), with nothing that
//! changes while the thread does not: no ages, no "generated at",
//! so an unchanged thread gives a byte-identical table and [`splice`] answers `None` (no write).
//! [`splice`] replaces only what lies between the markers; every byte outside them is kept, so a
//! person's text around the table survives, and two publishers that each re-read the body
//! before writing converge on it.

use super::status::StatusRow;

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
/// markers yet, appended after a blank line. Everything outside the markers stays byte for byte.
/// `None` when the result is `body` itself (nothing to write).
pub fn splice(body: &str, table: &str) -> Option<String> {
    let out = match span(body) {
        Some((start, end)) => format!("{}{table}{}", &body[..start], &body[end..]),
        None if body.trim().is_empty() => table.to_string(),
        None => {
            let sep = if body.ends_with("\n\n") {
                ""
            } else if body.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            format!("{body}{sep}{table}\n")
        }
    };
    (out != body).then_some(out)
}

/// The table `body` holds between its markers, markers included, when it has one.
pub fn current(body: &str) -> Option<&str> {
    span(body).map(|(start, end)| &body[start..end])
}

/// Where the table lies in `body`: from the start of the first begin marker to the end of the
/// first end marker after it. A begin marker without an end is no table (a person cut it).
fn span(body: &str) -> Option<(usize, usize)> {
    let start = body.find(BEGIN_PREFIX)?;
    let end = start + body[start..].find(END)? + END.len();
    Some((start, end))
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
