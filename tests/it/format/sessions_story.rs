//! The parts of a record that tell a session's story: end reasons, intents and their
//! confirmation, and which records are the same record.

use forgestate::format::{END_REASONS, Intent, Record};
use serde_json::{Value, json};

#[test]
fn reasons_are_checked_and_named() {
    for reason in END_REASONS {
        assert_eq!(
            Record::end("a", "s", reason, None).unwrap().end_reason(),
            Some(reason)
        );
    }
    let e = Record::end("a", "s", "done", None).unwrap_err().to_string();
    assert!(
        e.contains("completed, interrupted, error, user_stop"),
        "{e}"
    );
}

#[test]
fn an_intent_is_open_until_confirmed_by_name() {
    let r = Record::checkpoint("a", "s", "p", json!({}))
        .unwrap()
        .with_intent("create_pr", json!({"branch": "b"}))
        .unwrap();
    assert_eq!(r.open_intent().map(|i| i.name.as_str()), Some("create_pr"));
    let r = r.with_done("create_pr").unwrap();
    assert!(r.open_intent().is_none());
    let mut end = Record::end("a", "s", "completed", None).unwrap();
    end.intent = Some(Intent {
        name: "x".into(),
        data: Value::Null,
    });
    assert!(end.check().is_err(), "an intent belongs to a checkpoint");
}

fn seed() -> Record {
    let mut r = Record::checkpoint("a", "s", "p", json!({"k": 1, "j": [1, 2]})).unwrap();
    r.id = None;
    r
}

#[test]
fn a_copy_is_the_same_record_and_a_changed_one_is_not() {
    let original = seed();
    let copy = original.clone().carried(3);
    assert_eq!(original.identity(), copy.identity());
    let mut later = original.clone();
    later.time += chrono::Duration::microseconds(1);
    assert_ne!(original.identity(), later.identity());
    let mut other = Record {
        id: None,
        ..Record::checkpoint("a", "s", "p", json!({"k": 2, "j": [1, 2]})).unwrap()
    };
    other.time = original.time;
    assert_ne!(original.identity(), other.identity());
    let mut named = original.clone();
    named.id = Some("01a232d2-6f5a-743e-b1a3-fe4349829487".into());
    assert_ne!(
        original.identity(),
        named.identity(),
        "an Id decides when there is one"
    );
}

#[test]
fn nanoseconds_a_body_cannot_hold_do_not_count() {
    let mut a = seed();
    a.time = chrono::DateTime::from_timestamp(1_764_000_000, 123_456_789).unwrap();
    let mut b = a.clone();
    b.time = chrono::DateTime::from_timestamp(1_764_000_000, 123_456_000).unwrap();
    assert_eq!(a.identity(), b.identity());
}
