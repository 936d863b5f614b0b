//! `fork` never sends an existing session back in time. It used to: a fork into a session that
//! already had records (or into the session it forks from) posted a checkpoint there, so that
//! session's agent resumed from the fork's older state instead of its own newest checkpoint.

use forgestate::format::Record;
use forgestate::{Client, ForkQuery};
use serde_json::json;

fn cp(session: &str, phase: &str) -> Record {
    Record::checkpoint("w", session, phase, json!({"phase": phase})).unwrap()
}

#[tokio::test]
async fn fork_never_sends_an_existing_session_back_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let c = Client::local(dir.path().join("st")).unwrap();
    c.save(cp("s1", "clone_complete")).await.posted().unwrap();
    c.save(cp("s2", "pr_created")).await.posted().unwrap();
    // A reused (or mistyped) name: s2 is an existing session with its own progress.
    let into_existing = c.fork(&ForkQuery::new("s1", "s2")).await;
    assert!(
        into_existing.is_err(),
        "fork into a session with records: {into_existing:?}"
    );
    assert_eq!(
        c.resume("w", "s2").await.unwrap().resume.phase,
        "pr_created"
    );

    // Forking a session into itself at an older record is a rewind, not a fork.
    c.save(cp("s1", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let first = c.list(&Default::default(), None).await.unwrap().entries[0]
        .record
        .id
        .clone()
        .unwrap();
    let into_itself = c
        .fork(&ForkQuery {
            at: Some(first.clone()),
            ..ForkQuery::new("s1", "s1")
        })
        .await;
    let message = into_itself.as_ref().err().map(ToString::to_string);
    assert!(
        message.as_deref().is_some_and(|m| m.contains("s1")),
        "fork into itself: {into_itself:?}"
    );
    assert_eq!(
        c.resume("w", "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
}
