//! The outbox on its own, through its public API: entries in order and private, one flusher at
//! a time, dead letters, drain state and origin, and the survey of a machine's outboxes.

use std::path::Path;
use std::time::Duration;

use chrono::Utc;
use forgestate::durable::{DrainState, Origin, Outbox, survey};

#[test]
fn entries_come_back_in_order_and_temp_files_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let ob = Outbox::new(dir.path().join("ob"));
    assert!(
        ob.pending().unwrap().is_empty(),
        "a missing directory is an empty outbox"
    );
    for i in 0..50 {
        ob.push(&format!("body {i}")).unwrap();
    }
    std::fs::write(dir.path().join("ob/.tmp-1-2-3"), "half a bo").unwrap();
    let pending = ob.pending().unwrap();
    let bodies: Vec<_> = pending.iter().map(|s| s.body.clone()).collect();
    assert_eq!(
        bodies,
        (0..50).map(|i| format!("body {i}")).collect::<Vec<_>>()
    );
    assert!(
        pending
            .windows(2)
            .all(|w| w[0].spooled_at <= w[1].spooled_at)
    );
    ob.remove(&pending[0]).unwrap();
    ob.remove(&pending[0]).unwrap();
    assert_eq!(ob.len(), 49);
}

#[cfg(unix)]
#[test]
fn entries_are_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ob = Outbox::new(dir.path().join("ob"));
    let path = ob.push("secret-ish state").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(ob.dir()), 0o700);
}

#[test]
fn one_flusher_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let ob = Outbox::new(dir.path());
    let held = ob.try_lock().unwrap().expect("free");
    assert!(
        ob.try_lock().unwrap().is_none(),
        "a second flusher is refused"
    );
    drop(held);
    assert!(ob.try_lock().unwrap().is_some());
}

#[test]
fn backoff_doubles_and_is_capped() {
    let max = Duration::from_secs(300);
    let mut s = DrainState::default();
    assert_eq!(s.backoff(max), Duration::ZERO);
    s.failures = 1;
    assert_eq!(s.backoff(max), Duration::from_secs(15));
    s.failures = 3;
    assert_eq!(s.backoff(max), Duration::from_secs(60));
    s.failures = u32::MAX;
    assert_eq!(s.backoff(max), max);
    let now = Utc::now();
    s.last_failure_at = Some(now + chrono::Duration::hours(1));
    assert!(
        !s.backing_off(now, max),
        "a failure in the future never blocks"
    );
    s.last_failure_at = Some(now - chrono::Duration::seconds(10));
    assert!(s.backing_off(now, max));
}

#[test]
fn buried_entries_keep_their_reason_and_leave_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let ob = Outbox::new(dir.path().join("ob"));
    ob.push("refused body").unwrap();
    ob.push("fine body").unwrap();
    let first = ob.pending().unwrap().remove(0);
    let moved = ob.bury(
        &first,
        "the forge refused it (422)",
        Some("{\"message\":\"no\"}"),
    );
    let moved = moved.unwrap();
    assert_eq!(std::fs::read_to_string(&moved).unwrap(), "refused body");
    let left: Vec<_> = ob.pending().unwrap().into_iter().map(|s| s.body).collect();
    assert_eq!(left, ["fine body"]);
    let letters = ob.dead_letters().unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].path, moved);
    assert_eq!(letters[0].reason, "the forge refused it (422)");
}

#[test]
fn origin_and_state_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let ob = Outbox::new(dir.path().join("ob"));
    assert_eq!(ob.origin(), None);
    let origin = Origin {
        url: "https://forge.example/".into(),
        owner: "o".into(),
        repo: "r".into(),
    };
    ob.set_origin(&origin).unwrap();
    assert_eq!(ob.origin(), Some(origin));
    ob.record_failure("503");
    ob.record_failure("503 again");
    let s = ob.drain_state();
    assert_eq!(s.failures, 2);
    assert_eq!(s.last_error.as_deref(), Some("503 again"));
    ob.record_success();
    assert_eq!(ob.drain_state().failures, 0);
    assert!(
        ob.pending().unwrap().is_empty(),
        "metadata files are not entries"
    );
}

#[test]
fn lists_each_used_outbox_with_its_counts() {
    let root = tempfile::tempdir().unwrap();
    let a = Outbox::new(root.path().join("a")).with_origin(Origin {
        url: "https://one.example/".into(),
        owner: "o".into(),
        repo: "r".into(),
    });
    a.push("x").unwrap();
    a.push("y").unwrap();
    std::fs::create_dir_all(root.path().join("unused")).unwrap();
    let found = survey(&[root.path().to_path_buf(), root.path().join("missing")]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].waiting, 2);
    assert_eq!(
        found[0].origin.as_ref().unwrap().url,
        "https://one.example/"
    );
    assert!(found[0].oldest.is_some());
}
