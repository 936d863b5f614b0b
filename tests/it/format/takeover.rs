//! The takeover record: its layout, what it names, and the `Writer:` line of every kind.

use forgestate::format::{BuildError, Kind, Payload, Record, Renderer, new_record_id, parse};
use serde_json::json;

#[test]
fn a_takeover_round_trips_and_names_its_owner_origin_and_poster() {
    let from = new_record_id();
    let record = Record::takeover(
        "implementation-worker",
        "s1",
        "w-next",
        Some(from.clone()),
        Some("w-supervisor".into()),
    )
    .unwrap()
    .with_parent(Some(from.clone()));
    let body = Renderer::embedded().unwrap().render(&record).unwrap();
    assert!(
        body.starts_with("[TAKEOVER] implementation-worker\n"),
        "{body}"
    );
    assert!(body.contains("\nWriter: w-next\n"), "{body}");
    assert!(body.contains(&format!("\nFrom: {from}\n")), "{body}");
    assert!(body.contains("\nBy: w-supervisor\n"), "{body}");
    assert!(
        !body.contains("[CHECKPOINT]"),
        "seed 003 takes it for a checkpoint"
    );
    let back = parse(&body).unwrap();
    assert_eq!(back.kind(), Kind::Takeover);
    assert_eq!(back.new_owner(), Some("w-next"));
    assert_eq!(back.taken_from(), Some(from.as_str()));
    let mut expected = record.clone();
    expected.time = back.time;
    assert_eq!(back, expected);
}

#[test]
fn a_takeover_by_its_owner_names_no_poster_and_needs_a_writer() {
    let r = Record::takeover("a", "s", "w1", None, Some("w1".into())).unwrap();
    assert!(matches!(
        r.payload,
        Payload::Takeover {
            by: None,
            from: None
        }
    ));
    assert!(Record::takeover("a", "s", "two\nlines", None, None).is_err());
    let mut no_owner = r.clone();
    no_owner.writer = None;
    assert_eq!(no_owner.check(), Err(BuildError::NoWriter));
    let body = Renderer::embedded().unwrap().render(&r).unwrap();
    let cut = body.replace("Writer: w1\n", "");
    let e = parse(&cut).unwrap_err();
    assert_eq!(e.code(), "missing_field", "{e}");
}

#[test]
fn every_kind_carries_its_writer_and_records_without_one_still_read() {
    let renderer = Renderer::embedded().unwrap();
    for record in [
        Record::checkpoint("a", "s", "p", json!({"k": 1})).unwrap(),
        Record::health("a", "s", "Active", json!({}), Some("soon")).unwrap(),
        Record::end("a", "s", "completed", Some("done")).unwrap(),
    ] {
        let with = record.clone().with_writer(Some("cli-1a2b".into()));
        let body = renderer.render(&with).unwrap();
        assert!(body.contains("\nWriter: cli-1a2b\n"), "{body}");
        assert_eq!(parse(&body).unwrap().writer.as_deref(), Some("cli-1a2b"));
        let body = renderer.render(&record).unwrap();
        assert!(!body.contains("Writer:"), "{body}");
        assert_eq!(parse(&body).unwrap().writer, None);
    }
}
