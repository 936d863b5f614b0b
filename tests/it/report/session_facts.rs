//! What a pair's records say of its session: ended or reopened, a pending intent, conflicts.

use chrono::Utc;
use forgestate::format::Record;
use forgestate::report::{conflict_warning, facts};
use forgestate::scan::{CommentInfo, Entry};
use serde_json::{Value, json};

fn entry(record: Record, id: u64) -> Entry {
    Entry {
        fenced: false,
        record,
        comment: CommentInfo::at(Some(id), "me", Utc::now()),
    }
}

fn cp(parent: Option<&str>) -> Record {
    Record::checkpoint("a", "s", "p", json!({}))
        .unwrap()
        .with_parent(parent.map(str::to_string))
}

#[test]
fn an_end_is_reopened_by_a_later_checkpoint_only() {
    let first = cp(None);
    let end = Record::end("a", "s", "interrupted", Some("oom")).unwrap();
    let list = [entry(first.clone(), 1), entry(end.clone(), 2)];
    let f = facts(&list);
    assert_eq!(
        f.ended.as_ref().map(|e| e.reason.as_str()),
        Some("interrupted")
    );
    assert_eq!(
        f.ended.as_ref().and_then(|e| e.note.as_deref()),
        Some("oom")
    );
    assert_eq!(f.latest_id, end.id);
    let health = Record::health("a", "s", "Active", json!({}), None).unwrap();
    let f = facts(&[list[0].clone(), list[1].clone(), entry(health, 3)]);
    assert!(f.ended.is_some() && f.reopened.is_none());
    let f = facts(&[
        list[0].clone(),
        list[1].clone(),
        entry(cp(end.id.as_deref()), 3),
    ]);
    assert!(f.ended.is_none());
    assert_eq!(
        f.reopened.map(|e| e.reason),
        Some("interrupted".to_string())
    );
}

#[test]
fn an_intent_is_pending_until_a_later_checkpoint() {
    let intent = cp(None).with_intent("create_pr", json!({"b": 1})).unwrap();
    let f = facts(&[entry(intent.clone(), 1)]);
    let p = f.pending_intent.unwrap();
    assert_eq!(
        (p.name.as_str(), p.data.clone(), p.id),
        ("create_pr", json!({"b": 1}), intent.id.clone())
    );
    let f = facts(&[entry(intent.clone(), 1), entry(cp(intent.id.as_deref()), 2)]);
    assert!(f.pending_intent.is_none());
    let done = cp(None)
        .with_intent("x", Value::Null)
        .unwrap()
        .with_done("x")
        .unwrap();
    assert!(facts(&[entry(done, 1)]).pending_intent.is_none());
}

#[test]
fn two_records_from_one_parent_conflict() {
    let root = cp(None);
    let a = cp(root.id.as_deref());
    let b = cp(root.id.as_deref());
    let list = [
        entry(root.clone(), 1),
        entry(a.clone(), 2),
        entry(b.clone(), 3),
    ];
    let f = facts(&list);
    assert_eq!(f.conflicts.len(), 1);
    assert_eq!(f.conflicts[0].parent, root.id.clone().unwrap());
    let ids: Vec<_> = f.conflicts[0]
        .records
        .iter()
        .map(|s| s.id.clone())
        .collect();
    assert_eq!(ids, [a.id.clone(), b.id.clone()]);
    let w = conflict_warning("a", "s", &f.conflicts[0]);
    assert!(
        w.contains(a.id.as_deref().unwrap()) && w.contains(b.id.as_deref().unwrap()),
        "{w}"
    );
    let chain = [
        entry(root.clone(), 1),
        entry(a.clone(), 2),
        entry(cp(a.id.as_deref()), 3),
    ];
    assert!(facts(&chain).conflicts.is_empty());
}
