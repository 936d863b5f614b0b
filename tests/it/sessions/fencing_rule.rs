//! The fencing rule on records alone (pure): after a session's newest takeover, the records of
//! other writers are fenced; of two racing takeovers the last owns it; a takeover says who
//! posted it.

use chrono::Utc;
use forgestate::format::Record;
use forgestate::scan::{
    CommentInfo, Entry, Takeover, fence, fenced_flags, keep_displaced, keep_fencing,
};
use serde_json::json;

fn cp(session: &str, writer: Option<&str>) -> Record {
    Record::checkpoint("a", session, "p", json!({}))
        .unwrap()
        .with_writer(writer.map(str::to_string))
}

fn take(session: &str, writer: &str) -> Record {
    Record::takeover("a", session, writer, None, None).unwrap()
}

#[test]
fn records_of_other_writers_after_the_newest_takeover_are_fenced() {
    let records = [
        cp("s", Some("old")),
        take("s", "new"),
        cp("s", Some("old")),
        cp("s", Some("new")),
        cp("s", None),
        cp("other", Some("old")),
    ];
    assert_eq!(
        fenced_flags(&records),
        [false, false, true, false, false, false]
    );
}

#[test]
fn who_posted_a_takeover_is_said_of_the_takeover_not_of_the_record_it_continues_from() {
    let t = Takeover {
        owner: "w-next".into(),
        record_id: Some("T1".into()),
        from_record: Some("R0".into()),
        by: Some("w-sup".into()),
        at: Utc::now(),
    };
    let words = t.describe();
    assert!(
        words.contains("(takeover record T1, posted by writer w-sup)"),
        "{words}"
    );
    assert!(words.ends_with("continuing from record R0"), "{words}");
}

#[test]
fn the_last_of_two_racing_takeovers_owns_the_session() {
    let records = [
        take("s", "b"),
        take("s", "c"),
        cp("s", Some("b")),
        cp("s", Some("c")),
    ];
    assert_eq!(fenced_flags(&records), [false, false, true, false]);
    // Between two takeovers, the first one's owner wrote legitimately.
    let records = [take("s", "b"), cp("s", Some("b")), take("s", "c")];
    assert_eq!(fenced_flags(&records), [false, false, false]);
}

fn entries(records: Vec<Record>) -> Vec<Entry> {
    let mut out: Vec<Entry> = records
        .into_iter()
        .enumerate()
        .map(|(i, record)| Entry {
            record,
            comment: CommentInfo::at(Some(i as u64 + 1), "me", Utc::now()),
            fenced: false,
        })
        .collect();
    fence(&mut out);
    out
}

#[test]
fn what_the_fencing_rule_needs_is_never_removed() {
    let all = entries(vec![
        take("s", "b"),
        cp("s", Some("x")), // fenced by the first takeover alone
        take("s", "c"),
        cp("s", Some("c")), // the second takeover's owner: removing it would fence this one
        take("s", "c"),
        take("other", "d"), // fences nothing
    ]);
    assert_eq!(
        all.iter().map(|e| e.fenced).collect::<Vec<_>>(),
        [false, true, false, false, false, false]
    );
    let mut gone = [true, false, true, false, false, true];
    assert_eq!(keep_fencing(&all, &mut gone), 2);
    assert_eq!(gone, [false, false, false, false, false, true]);
    // With the records they fence gone too, the takeovers may go; but x, whose session c owns
    // now, keeps its newest record (which tells x so), and with it the takeover fencing it.
    let mut gone = [true, true, true, true, false, true];
    assert_eq!(keep_displaced(&all, &mut gone), 1);
    assert_eq!(keep_fencing(&all, &mut gone), 1);
    assert_eq!(gone, [false, false, true, true, false, true]);
    // A writer of the session's owner, or one that names none, keeps nothing.
    let all = entries(vec![
        cp("s", Some("c")),
        cp("s", None),
        take("s", "c"),
        cp("s", Some("c")),
    ]);
    let mut gone = [true, true, false, false];
    assert_eq!(keep_displaced(&all, &mut gone), 0);
    assert_eq!(keep_fencing(&all, &mut gone), 0);
    assert_eq!(gone, [true, true, false, false]);
}
