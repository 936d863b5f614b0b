//! No session is lost by depth: a session idle while people closed the head (closing carries
//! nothing) or while rotations passed it by (older than `carry_days`) resumes where it was,
//! however many heads ago it last wrote, from a machine that never saw the thread.

use crate::fake_forge::{self, FakeForge, bot};
use forgestate::format::Record;
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase": phase})).unwrap()
}

async fn fresh_resume(fake: &FakeForge) -> String {
    let dir = tempfile::tempdir().unwrap();
    let got = bot(fake, dir.path()).resume("idle", "s1").await.unwrap();
    got.resume.phase
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_session_survives_four_heads_closed_by_people() {
    let fake = FakeForge::start().await;
    let mut head = fake_forge::session(&fake);
    let w = tempfile::tempdir().unwrap();
    bot(&fake, w.path())
        .save(cp("idle", "s1", "subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    for n in 0..5 {
        // An hour later a person closes the head in the web UI; another agent's next record
        // opens a new one.
        fake.age(3600);
        fake.set_closed(head, true);
        let other = tempfile::tempdir().unwrap();
        let saved = bot(&fake, other.path())
            .save(cp("busy", &format!("b{n}"), "clone_complete"))
            .await
            .posted()
            .unwrap();
        let now = forgestate::store::issue_in_url(saved.url.as_deref().unwrap()).unwrap();
        assert!(now > head, "a new head was opened");
        head = now;
    }
    assert_eq!(fresh_resume(&fake).await, "subtask_2_complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unfinished_session_is_carried_by_every_rotation_whatever_its_age() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let w = tempfile::tempdir().unwrap();
    bot(&fake, w.path())
        .save(cp("idle", "s1", "subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    // A finished session of the same age is left behind (it stays readable through the link).
    let done = tempfile::tempdir().unwrap();
    let d = bot(&fake, done.path());
    d.save(cp("done", "s0", "clone_complete"))
        .await
        .posted()
        .unwrap();
    d.save(Record::end("done", "s0", "completed", None).unwrap())
        .await
        .posted()
        .unwrap();
    fake.age(90 * 86_400);
    for n in 0..5 {
        let r = tempfile::tempdir().unwrap();
        let c = bot(&fake, r.path());
        c.save(cp("busy", &format!("b{n}"), "clone_complete"))
            .await
            .posted()
            .unwrap();
        let rotation = c.rotate().await.unwrap();
        let carried_idle = rotation.carried >= 2;
        assert!(carried_idle, "rotation {n}: {rotation:?}");
    }
    assert_eq!(fresh_resume(&fake).await, "subtask_2_complete");
    // The idle session is in the head itself, not only down the chain.
    let dir = tempfile::tempdir().unwrap();
    let got = bot(&fake, dir.path()).resume("idle", "s1").await.unwrap();
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
}
