//! Issue #42, medium 7: a rotation's new head is a successor from its first byte. It is
//! created naming the issue it continues, so no convergence rule takes it for a duplicate: an
//! older open issue that continues nothing (a crashed `init`'s) loses to it, a machine that saw
//! the old head over its limit does not rotate the new head again, and a rotation killed after
//! any step leaves a thread the next record of any machine completes, never turns back. A
//! rotation under way is left to the run that created the successor: the writers that find
//! both issues open do not all carry the same records (the soak's copies).

use std::time::Duration;

use crate::fake_forge::{BOT_TOKEN, FakeForge, Fault, bot, client, session};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::defaults::LABEL;
use forgestate::format::{Record, parse};
use serde_json::json;

fn cp(session: &str, phase: &str) -> Record {
    Record::checkpoint("a", session, phase, json!({"phase": phase})).unwrap()
}

fn fresh_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn ids_on(fake: &FakeForge, issue: u64) -> Vec<String> {
    fake.comments_on(issue)
        .iter()
        .filter_map(|c| parse(&c.body).ok()?.id)
        .collect()
}

async fn resumed(fake: &FakeForge, session: &str) -> String {
    let c = bot(fake, fresh_dir().path());
    c.resume("a", session).await.unwrap().resume.phase
}

#[tokio::test(flavor = "multi_thread")]
async fn a_successor_wins_over_an_older_open_issue_that_continues_nothing() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let old = fake.add_issue(TITLE, &[label], false);
    let writer = bot(&fake, fresh_dir().path());
    writer
        .save(cp("s", "clone_complete"))
        .await
        .posted()
        .unwrap();
    // A duplicate a crashed `init` left open: it continues nothing.
    let dup = fake.add_issue(TITLE, &[label], false);
    let rotated = bot(&fake, fresh_dir().path()).rotate().await.unwrap();
    assert_eq!(rotated.from, old);
    let new = rotated.to.unwrap();
    assert!(new > dup && rotated.closed, "{rotated:?}");

    let fresh = bot(&fake, fresh_dir().path());
    let id = fresh
        .save(cp("s", "subtask_1_complete"))
        .await
        .posted()
        .unwrap()
        .id
        .unwrap();
    assert!(ids_on(&fake, new).contains(&id), "written to the successor");
    fresh.rotate_if_due().await.unwrap();
    assert_eq!(
        fake.open_issues_titled(TITLE),
        vec![new],
        "the duplicate is closed, the successor is not"
    );
    assert_eq!(resumed(&fake, "s").await, "subtask_1_complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_machine_that_saw_the_old_head_due_does_not_rotate_the_new_head() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let writer = bot(&fake, fresh_dir().path());
    for phase in ["p1", "p2", "p3", "p4", "p5"] {
        writer.save(cp("s", phase)).await.posted().unwrap();
    }
    // This machine reads the old head while it is over its limit.
    let dir = fresh_dir();
    let machine = client(&fake, BOT_TOKEN, dir.path())
        .rotate_after(3)
        .recheck_after(Duration::from_secs(3600))
        .build()
        .unwrap();
    assert_eq!(machine.resume("a", "s").await.unwrap().resume.phase, "p5");
    // Another machine rotates it, and writes an original on the new head.
    let new = bot(&fake, fresh_dir().path())
        .rotate()
        .await
        .unwrap()
        .to
        .unwrap();
    bot(&fake, fresh_dir().path())
        .save(cp("s", "p6"))
        .await
        .posted()
        .unwrap();
    let issues = fake.state().issues.len();

    assert_eq!(machine.rotate_if_due().await.unwrap(), None);
    assert_eq!(fake.state().issues.len(), issues, "no new session issue");
    assert_eq!(fake.open_issues_titled(TITLE), vec![new]);
    assert!(!ids_on(&fake, old).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_killed_after_any_step_is_completed_by_the_next_record() {
    type Inject = fn(&FakeForge, u64, u64);
    let steps: [(&str, Inject); 4] = [
        ("carrying the first record", |f, _, new| {
            f.inject(&format!("/issues/{new}/comments"), Fault::Status(403))
        }),
        ("carrying the second record", |f, _, new| {
            let path = format!("/issues/{new}/comments");
            f.inject(&path, Fault::Pass);
            f.inject(&path, Fault::Status(403));
        }),
        ("noting the new issue on the old one", |f, old, _| {
            f.inject(&format!("/issues/{old}/comments"), Fault::Status(403))
        }),
        ("closing the old issue", |f, old, _| {
            f.inject(&format!("/issues/{old}"), Fault::Status(403))
        }),
    ];
    for (step, inject) in steps {
        let fake = FakeForge::start().await;
        let old = session(&fake);
        let writer = bot(&fake, fresh_dir().path());
        writer
            .save(cp("s1", "clone_complete"))
            .await
            .posted()
            .unwrap();
        let s2 = writer
            .save(cp("s2", "clone_complete"))
            .await
            .posted()
            .unwrap();
        let new = fake.state().last_number + 1;
        inject(&fake, old, new);
        let killed = bot(&fake, fresh_dir().path()).rotate().await;
        assert!(killed.is_err(), "{step}: the injected failure stops it");
        assert!(fake.state().faults.is_empty(), "{step}: the fault was hit");
        assert_eq!(fake.open_issues_titled(TITLE), vec![old, new], "{step}");

        // The next record, from a machine that never saw the thread, once the killed run would
        // have finished (a run under way is left to finish: the next test).
        fake.age(61);
        let fresh = bot(&fake, fresh_dir().path());
        let id = fresh
            .save(cp("s1", "subtask_1_complete"))
            .await
            .posted()
            .unwrap()
            .id
            .unwrap();
        assert!(
            ids_on(&fake, new).contains(&id),
            "{step}: written to the new head"
        );
        fresh.rotate_if_due().await.unwrap();
        assert_eq!(
            fake.open_issues_titled(TITLE),
            vec![new],
            "{step}: the rotation is completed"
        );
        assert_eq!(fake.state().last_number, new, "{step}: no other issue");
        assert_eq!(resumed(&fake, "s1").await, "subtask_1_complete", "{step}");
        assert_eq!(resumed(&fake, "s2").await, "clone_complete", "{step}");
        let on_new = ids_on(&fake, new);
        assert!(
            on_new.contains(&s2.id.unwrap()),
            "{step}: s2 carried: {on_new:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_under_way_is_left_to_its_creator_and_finished_once_it_stalls() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let writer = bot(&fake, fresh_dir().path());
    for phase in ["p1", "p2", "p3", "p4"] {
        writer.save(cp("s", phase)).await.posted().unwrap();
    }
    // A machine that reads the old head while it is over its limit.
    let dir = fresh_dir();
    let due = client(&fake, BOT_TOKEN, dir.path())
        .rotate_after(3)
        .recheck_after(Duration::from_secs(3600))
        .build()
        .unwrap();
    assert_eq!(due.resume("a", "s").await.unwrap().resume.phase, "p4");
    // Another machine's rotation has just created the successor and is carrying.
    let label = fake
        .state()
        .labels
        .iter()
        .find(|l| l.name == LABEL)
        .unwrap()
        .id;
    let new = fake.add_issue(TITLE, &[label], false);
    fake.edit_issue_body(
        new,
        &format!("Previous session issue: #{old}\n\nSession state."),
    );

    let machine = bot(&fake, fresh_dir().path());
    let id = machine
        .save(cp("t", "p1"))
        .await
        .posted()
        .unwrap()
        .id
        .unwrap();
    assert_eq!(
        ids_on(&fake, new),
        vec![id.clone()],
        "written to the successor"
    );
    machine.rotate_if_due().await.unwrap();
    assert_eq!(due.rotate_if_due().await.unwrap(), None);
    assert_eq!(
        ids_on(&fake, new),
        vec![id],
        "nothing carried beside its creator"
    );
    assert_eq!(fake.open_issues_titled(TITLE), vec![old, new]);
    // The machine that found the old head due writes to the successor from now on, though
    // its cached number, still fresh, named the old head.
    let next = due.save(cp("s", "p5")).await.posted().unwrap().id.unwrap();
    assert!(
        ids_on(&fake, new).contains(&next),
        "no longer written to the old head"
    );

    // A minute later (past `STALLED`, 15 s without progress) its creator is gone: the next
    // record finishes the rotation.
    fake.age(61);
    let later = bot(&fake, fresh_dir().path());
    later.save(cp("t", "p2")).await.posted().unwrap();
    later.rotate_if_due().await.unwrap();
    assert_eq!(fake.open_issues_titled(TITLE), vec![new]);
    assert_eq!(resumed(&fake, "s").await, "p5");
    assert_eq!(
        ids_on(&fake, new).len(),
        3,
        "t's two records and p5 (nothing of s left to carry)"
    );
}
