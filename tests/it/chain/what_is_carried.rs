//! What a rotation carries: the newest checkpoint, health and end of every unfinished pair, and
//! of every other pair active within `carry_days`, in thread order.

use chrono::Utc;
use forgestate::client::to_carry;
use forgestate::format::Record;
use forgestate::scan::{CommentInfo, Entry};
use serde_json::json;

fn entry(id: u64, agent: &str, session: &str, health: bool, age_days: i64) -> Entry {
    let now = Utc::now();
    let record = if health {
        Record::health(agent, session, "Active", json!({}), None)
    } else {
        Record::checkpoint(agent, session, &format!("p{id}"), json!({}))
    }
    .unwrap();
    let at = now - chrono::Duration::days(age_days);
    Entry {
        fenced: false,
        record,
        comment: CommentInfo::at(Some(id), "bot", at),
    }
}

#[test]
fn carries_the_newest_checkpoint_and_health_of_active_pairs_in_thread_order() {
    let mut done = entry(3, "old", "s", false, 40);
    done.record = Record::end("old", "s", "completed", None).unwrap();
    let entries = vec![
        entry(1, "a", "s1", false, 3),
        entry(2, "a", "s1", true, 3),
        done,
        entry(4, "a", "s1", false, 2),
        entry(5, "b", "s2", false, 1),
        entry(6, "a", "s2", true, 1),
    ];
    let picked: Vec<u64> = to_carry(&entries, 30, Utc::now())
        .iter()
        .filter_map(|e| e.comment.id)
        .collect();
    assert_eq!(picked, vec![2, 4, 5, 6]);
}

#[test]
fn a_pair_counts_as_active_by_its_newest_record() {
    let entries = vec![entry(1, "a", "s", false, 50), entry(2, "a", "s", true, 1)];
    let picked: Vec<u64> = to_carry(&entries, 30, Utc::now())
        .iter()
        .filter_map(|e| e.comment.id)
        .collect();
    assert_eq!(picked, vec![1, 2]);
}

#[test]
fn a_record_carried_before_is_as_old_as_its_time_line() {
    let mut e = entry(1, "a", "s", false, 0);
    e.record.carried_from = Some(3);
    e.record.time = Utc::now() - chrono::Duration::days(45);
    let end = |n: u64| {
        let mut end = entry(n, "a", "s", false, 45);
        end.record = Record::end("a", "s", "completed", None).unwrap();
        end.record.carried_from = Some(3);
        end.record.time = Utc::now() - chrono::Duration::days(45);
        end
    };
    assert!(to_carry(&[e.clone(), end(2)], 30, Utc::now()).is_empty());
    assert_eq!(to_carry(&[e, end(2)], 60, Utc::now()).len(), 2);
}

#[test]
fn an_unfinished_session_is_carried_whatever_its_age() {
    let idle = entry(1, "a", "s", false, 400);
    assert_eq!(
        to_carry(std::slice::from_ref(&idle), 30, Utc::now()).len(),
        1
    );
    let mut end = entry(2, "a", "s", false, 400);
    end.record = Record::end("a", "s", "completed", None).unwrap();
    assert!(to_carry(&[idle, end], 30, Utc::now()).is_empty());
}
