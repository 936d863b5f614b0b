//! The phase timeline under the status table: bars per phase over the day before the newest
//! record, capped, and no name that can break the diagram.

use chrono::{DateTime, Duration, Utc};
use forgestate::format::{MAX_FIELD_CHARS, Payload, Record};
use forgestate::report::timeline::{MAX_SECTIONS, MAX_TASKS, gantt};
use forgestate::scan::{CommentInfo, Entry};
use serde_json::json;

/// What starts a mermaid gantt directive at the beginning of a line (mermaid 11's parser).
const KEYWORDS: &[&str] = &[
    "accdescr",
    "acctitle",
    "axisformat",
    "call",
    "click",
    "dateformat",
    "displaymode",
    "excludes",
    "gantt",
    "includes",
    "inclusiveenddates",
    "section",
    "tickinterval",
    "title",
    "todaymarker",
    "topaxis",
    "vert",
    "weekday",
    "weekend",
];

fn at(minutes: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T12:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap()
        + Duration::minutes(minutes)
}

fn entry(record: Record, minutes: i64) -> Entry {
    Entry {
        fenced: false,
        record,
        comment: CommentInfo::at(
            Some(u64::try_from(minutes + 10_000).unwrap()),
            "bot",
            at(minutes),
        ),
    }
}

fn cp(agent: &str, session: &str, phase: &str, minutes: i64) -> Entry {
    entry(
        Record::checkpoint(agent, session, phase, json!({})).unwrap(),
        minutes,
    )
}

#[test]
fn phases_become_bars_until_the_next_record() {
    let entries = vec![
        cp("w", "s1", "clone_complete", 0),
        cp("w", "s1", "subtask_1_complete", 5),
        cp("w", "s1", "subtask_1_complete", 7),
        entry(
            Record::health("w", "s1", "Active", json!({}), None).unwrap(),
            8,
        ),
        cp("w", "s1", "subtask_2_complete", 20),
        cp("o", "s1", "plan", 30),
    ];
    let g = gantt(&entries).unwrap();
    assert!(
        g.starts_with("```mermaid\ngantt\n") && g.ends_with("```\n"),
        "{g}"
    );
    assert!(
        g.contains("    section o · s1\n    plan :2026-12-01T12:30:00, 2026-12-01T12:31:00\n"),
        "{g}"
    );
    assert!(
        g.contains(
            "    section w · s1\n    clone_complete :2026-12-01T12:00:00, 2026-12-01T12:05:00\n    \
             subtask_1_complete :2026-12-01T12:05:00, 2026-12-01T12:20:00\n    \
             subtask_2_complete :2026-12-01T12:20:00, 2026-12-01T12:30:00\n"
        ),
        "a repeated phase is one bar, a health record ends none: {g}"
    );
    assert_eq!(
        gantt(&entries),
        Some(g),
        "the same records draw the same diagram"
    );
    assert_eq!(gantt(&[]), None);
    let health = entry(
        Record::health("w", "s", "Active", json!({}), None).unwrap(),
        0,
    );
    assert_eq!(gantt(&[health]), None, "no checkpoint, no diagram");
}

#[test]
fn the_window_is_the_day_before_the_newest_record() {
    let day = 24 * 60;
    let entries = vec![
        cp("w", "old", "long_gone", -3 * day),
        cp("w", "s", "started_yesterday", -2 * 60),
        cp("w", "s", "today", day - 60),
        cp("w", "s", "newest", day),
    ];
    let g = gantt(&entries).unwrap();
    assert!(
        !g.contains("long_gone") && !g.contains("section w · old"),
        "{g}"
    );
    assert!(
        g.contains("started_yesterday :2026-12-01T12:00:00, 2026-12-02T11:00:00"),
        "a bar that began before the window starts at its edge: {g}"
    );
}

#[test]
fn no_name_can_break_the_diagram() {
    let nasty = [
        "a:b, 2026-01-01",
        "```\n# heading",
        "section evil",
        "Title x",
        "click here",
        "call it",
        "TodayMarker off",
        "Gantt-2",
        "accDescription x",
        "2026-12-01 release",
        "%%{init: {}}%%",
        "x; y # z <b>&amp;",
        "",
    ];
    let entries: Vec<Entry> = nasty
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut e = cp("w", "s", "p", i64::try_from(i).unwrap());
            if let Payload::Checkpoint { phase, .. } = &mut e.record.payload {
                *phase = (*p).to_string();
            }
            e
        })
        .collect();
    let g = gantt(&entries).unwrap();
    let body = g
        .strip_prefix("```mermaid\n")
        .and_then(|b| b.strip_suffix("```\n"))
        .unwrap();
    assert!(!body.contains('`'), "{g}");
    // Past the four fixed lines, only sections and bars, with nothing mermaid reads.
    let drawn: Vec<&str> = body.lines().skip(4).collect();
    for line in &drawn {
        assert!(!line.contains(['%', '#', '<', '&', ';', '{']), "{line}");
        assert!(
            line.starts_with("    section ") || line.contains(" :2026"),
            "{line}"
        );
    }
    let tasks: Vec<&str> = drawn
        .iter()
        .copied()
        .filter(|l| l.contains(" :2026"))
        .collect();
    assert_eq!(tasks.len(), nasty.len(), "one bar each: {g}");
    for t in &tasks {
        let (name, _) = t.split_once(" :").unwrap();
        assert!(!name.contains([':', ',']), "{t}");
        let name = name.trim_start().to_lowercase();
        assert!(name.starts_with(char::is_alphabetic), "{t}");
        assert!(!KEYWORDS.iter().any(|k| name.starts_with(k)), "{t}");
    }
}

#[test]
fn a_label_is_cut_to_a_names_own_limit() {
    let mut e = cp("w", "s", "p", 0);
    e.record.agent = "é".repeat(MAX_FIELD_CHARS + 9);
    let g = gantt(&[e]).unwrap();
    let section = g
        .lines()
        .find_map(|l| l.strip_prefix("    section "))
        .unwrap();
    let (agent, _) = section.split_once(" · ").unwrap();
    assert_eq!(agent.chars().count(), MAX_FIELD_CHARS, "{g}");
}

#[test]
fn sections_and_bars_are_capped() {
    let mut entries = Vec::new();
    for s in 0..(MAX_SECTIONS + 3) {
        for p in 0..(MAX_TASKS + 5) {
            let minutes = i64::try_from(s * 100 + p).unwrap();
            entries.push(cp("w", &format!("s{s:02}"), &format!("p{p}"), minutes));
        }
    }
    let g = gantt(&entries).unwrap();
    assert_eq!(g.matches("    section ").count(), MAX_SECTIONS, "{g}");
    assert!(
        !g.contains("section w · s00") && g.contains("section w · s14"),
        "newest kept"
    );
    assert_eq!(g.matches(" :2026").count(), MAX_SECTIONS * MAX_TASKS);
}
