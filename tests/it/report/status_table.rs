//! The status table in an issue body: spliced between its real markers only, every byte
//! outside them kept, and no cell that can break the table or the markers.

use chrono::Utc;
use forgestate::format::Record;
use forgestate::report::dashboard::{BEGIN, END, current, splice, splice_between, table};
use forgestate::report::{StatusPolicy, status};
use forgestate::resume::ResumeMap;
use forgestate::scan::{CommentInfo, Entry};
use serde_json::json;

/// The first cell of the table's row for a pair whose agent is named `agent` (session `s`).
fn cell(agent: &str) -> String {
    let mut record = Record::checkpoint("a", "s", "p", json!({})).unwrap();
    record.agent = agent.to_string();
    let table = table(&rows_of(record), None);
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("|---"))
        .nth(1)
        .unwrap();
    let (first, _) = row
        .strip_prefix("| ")
        .unwrap()
        .split_once(" | s | ")
        .unwrap();
    first.to_string()
}

/// The status rows of a thread holding `record` alone, posted now.
fn rows_of(record: Record) -> Vec<forgestate::report::StatusRow> {
    let entry = Entry {
        fenced: false,
        record,
        comment: CommentInfo::at(Some(1), "bot", Utc::now()),
    };
    status(
        &[entry],
        Utc::now(),
        &StatusPolicy::default(),
        &ResumeMap::default(),
    )
}

fn t(text: &str) -> String {
    format!("{BEGIN}\n{text}\n{END}")
}

#[test]
fn splice_keeps_the_text_outside_the_markers_byte_for_byte() {
    let person = "Hello.\r\n\r\nNotes  \n";
    let first = splice(person, &t("one")).unwrap();
    assert_eq!(first, format!("{}\n\n{person}", t("one")), "at the top");
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
    assert!(splice(&cut, &t("x")).unwrap().ends_with(&cut));
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
    assert_eq!(first, format!("{}\n\n{body}", t("one")));
    assert_eq!(current(&first), Some(t("one").as_str()));
    let second = splice(&first, &t("two")).unwrap();
    assert_eq!(second, format!("{}\n\n{body}", t("two")));
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
    assert_eq!(first, format!("{}\n\n{cut}", t("one")));
    let second = splice(&first, &t("two")).unwrap();
    assert_eq!(second, format!("{}\n\n{cut}", t("two")));
}

#[test]
fn a_fence_left_open_stays_below_the_table_and_it_is_not_put_there_again() {
    let open = "Notes\n\n````sh\nmake\n";
    let first = splice(open, &t("one")).unwrap();
    assert_eq!(first, format!("{}\n\n{open}", t("one")));
    let second = splice(&first, &t("two")).unwrap();
    assert_eq!(second, format!("{}\n\n{open}", t("two")));
    assert_eq!(splice(&second, &t("two")), None);
    // Blocks spliced after a body (the docs' generated ones) still close the fence first.
    let block = "<!-- x:begin -->\none\n<!-- x:end -->".to_string();
    let after = splice_between(open, ("<!-- x:begin", "<!-- x:end -->"), &block).unwrap();
    assert_eq!(after, format!("{open}````\n\n{block}\n"));
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

/// A real table for one pair at `phase`, with a phase diagram below it when `timeline`.
fn rendered(phase: &str, timeline: bool) -> String {
    let rows = rows_of(Record::checkpoint("a", "s", phase, json!({})).unwrap());
    let gantt = "```mermaid\ngantt\n    dateFormat X\n    section a · s\n    p : 0, 1\n```\n";
    table(&rows, timeline.then_some(gantt))
}

#[test]
fn a_table_whose_end_marker_a_person_deleted_is_replaced_not_left_as_text() {
    for (timeline, old) in [
        (false, rendered("old_phase", false)),
        (true, rendered("old_phase", true)),
        (false, table(&[], None)),
    ] {
        let cut = old.strip_suffix(END).unwrap().trim_end();
        let body = format!("Intro\n\n{cut}\n\nA person's text after.\n");
        let new = rendered("new_phase", timeline);
        let out = splice(&body, &new).unwrap();
        assert_eq!(out, format!("Intro\n\n{new}\n\nA person's text after.\n"));
        assert_eq!(current(&body).map(|t| t.trim_end()), Some(cut));
        assert_eq!(splice(&out, &new), None);
    }
}
