//! Hole 12: a reopened old session issue is closed by the machine that warned of it. A
//! read-only command (`resume`) on a machine finds the reopened issue and says "this machine's
//! next record rotates it again to close it"; the machine's next record, written by another
//! process whose cached head is still fresh (so it discovers nothing itself), does so.

use std::time::Duration;

use crate::fake_forge::{BOT_TOKEN, FakeForge, bot, client, session};
use forgestate::format::Record;
use serde_json::json;

fn cp(phase: &str) -> Record {
    Record::checkpoint("a", "s", phase, json!({"phase": phase})).unwrap()
}

fn is_closed(fake: &FakeForge, n: u64) -> bool {
    fake.state().issue_mut(n).is_some_and(|i| i.closed)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_machine_that_warned_closes_the_reopened_issue_with_its_next_record() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let setup = tempfile::tempdir().unwrap();
    bot(&fake, setup.path())
        .save(cp("clone_complete"))
        .await
        .posted()
        .unwrap();
    let new = bot(&fake, setup.path()).rotate().await.unwrap().to.unwrap();
    fake.age(3600);
    fake.set_closed(old, false); // a person reopens it

    // The machine, one process: a resume, which warns and writes nothing.
    let machine = tempfile::tempdir().unwrap();
    let on_machine = || {
        client(&fake, BOT_TOKEN, machine.path())
            .recheck_after(Duration::from_secs(3600))
            .build()
            .unwrap()
    };
    let resumed = on_machine().resume("a", "s").await.unwrap();
    assert_eq!(resumed.resume.phase, "clone_complete");
    assert!(!is_closed(&fake, old), "a read closes nothing");

    // The same machine, the next process: its cached head is fresh, so it discovers nothing;
    // its record still closes what the resume warned of.
    let next = on_machine();
    next.save(cp("subtask_1_complete")).await.posted().unwrap();
    next.rotate_if_due().await.unwrap();
    assert!(is_closed(&fake, old), "the machine that warned closed it");
    assert_eq!(
        fake.open_issues_titled(forgestate::config::DEFAULT_TITLE),
        vec![new]
    );
}
