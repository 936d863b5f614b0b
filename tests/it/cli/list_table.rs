//! `list`'s table as the verb shows it (`forgestate::verbs::cli::Command::show`): at a terminal
//! a header, aligned columns and ages; piped, tab-separated with the store's time of each comment.

use std::cell::RefCell;

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde::Serialize;
use serde_json::json;

use forgestate::format::Record;
use forgestate::scan::{CommentInfo, Entry};
use forgestate::verbs::cli::table::Layout;
use forgestate::verbs::cli::{Command, Printer};
use forgestate::verbs::{FlushError, ListAnswer, ListRequest, ListVerb};

/// A printer at a terminal of `layout`, keeping the text shown.
struct Shown(Layout, RefCell<String>);

impl Printer for Shown {
    fn json<T: Serialize>(&self, _: &T) {}
    fn json_line<T: Serialize>(&self, _: &T) {}
    fn out(&self, text: &str) {
        self.1.borrow_mut().push_str(text);
    }
    fn note(&self, _: &str) {}
    fn layout(&self) -> Layout {
        self.0
    }
    fn printable(&self, text: &str) -> String {
        text.to_string()
    }
    fn error_object(&self, e: &forgestate::Error) -> FlushError {
        let (code, category, reason) = (1, String::new(), None);
        let message = e.to_string();
        FlushError {
            code,
            category,
            message,
            reason,
        }
    }
}

/// A checkpoint of session `s1` in comment `id`, posted (by the store's clock) `at`.
fn entry(id: u64, agent: &str, phase: &str, at: DateTime<Utc>) -> Entry {
    let mut record = Record::checkpoint(agent, "s1", phase, json!({})).unwrap();
    record.time = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
    let comment = CommentInfo::at(Some(id), "bot", at);
    let fenced = false;
    Entry {
        record,
        fenced,
        comment,
    }
}

/// The text `list` shows for `records` at a terminal of `layout`.
fn shown(records: Vec<Entry>, layout: Layout) -> String {
    let (invalid, warnings) = (None, Vec::new());
    let answer = ListAnswer {
        records,
        invalid,
        offline: false,
        complete: true,
        warnings,
    };
    let printer = Shown(layout, RefCell::default());
    assert_eq!(ListVerb::show(&ListRequest::default(), answer, &printer), 0);
    printer.1.into_inner()
}

#[test]
fn the_terminal_table_has_a_header_aligned_columns_and_ages() {
    let now = Utc::now();
    let records = vec![
        entry(
            7,
            "implementation-worker",
            "clone_complete",
            now - Duration::seconds(190),
        ),
        entry(1234, "w", "pr_created", now - Duration::seconds(2)),
    ];
    let text = shown(records, Layout::Terminal(200));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("ID    POSTED    KIND"), "{text}");
    let first = "7     3m ago    checkpoint  implementation-worker  s1";
    assert!(lines[1].starts_with(first), "{text}");
    let second = "1234  just now  checkpoint  w                      s1";
    assert!(lines[2].starts_with(second), "{text}");
    let col = |l: &str| l.find("phase=");
    assert_eq!(col(lines[1]), col(lines[2]), "{text}");
    assert_eq!(col(lines[1]), lines[0].find("DETAIL"), "{text}");
}

#[test]
fn piped_list_is_tab_separated_with_the_stores_time_not_the_time_line() {
    let stored = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
    let text = shown(vec![entry(7, "w", "clone_complete", stored)], Layout::Piped);
    assert_eq!(
        text,
        "7\t2026-12-01T10:00:00.000000Z\tcheckpoint\tw\ts1\tphase=clone_complete"
    );
}
