//! The whole history of a session thread: after a rotation, `list` answers from the head (with
//! what was carried), and `list --all` reads every earlier session issue too, so a record a
//! rotation did not carry stays listable from any machine, once, in thread order.

use crate::{common, fake_forge};

use crate::fake_forge::bot;
use common::cli::Bin;
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::format::Record;
use serde_json::{Value, json};

fn cp(phase: &str) -> Record {
    Record::checkpoint("a", "s1", phase, json!({"phase": phase})).unwrap()
}

async fn listed(fake: &FakeForge, history: bool) -> Vec<(String, Option<u64>)> {
    let dir = tempfile::tempdir().unwrap();
    let scan = bot(fake, dir.path())
        .query(&forgestate::ListQuery {
            whole_history: history,
            ..Default::default()
        })
        .await
        .unwrap();
    scan.entries
        .iter()
        .map(|e| (e.record.phase().unwrap().to_string(), e.comment.issue))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn list_all_reads_the_records_a_rotation_did_not_carry() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let w = tempfile::tempdir().unwrap();
    let writer = bot(&fake, w.path());
    for phase in ["clone_complete", "subtask_1_complete"] {
        writer.save(cp(phase)).await.posted().unwrap();
    }
    // Well before the rotation, so the head's cold read does not merge them on its own.
    fake.age(3600);
    let rotation = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let new = rotation.to.unwrap();
    assert_eq!(rotation.carried, 1, "only the newest checkpoint is carried");
    bot(&fake, tempfile::tempdir().unwrap().path())
        .save(cp("subtask_2_complete"))
        .await
        .posted()
        .unwrap();

    let head_only = listed(&fake, false).await;
    assert_eq!(
        head_only,
        [
            ("subtask_1_complete".to_string(), Some(new)),
            ("subtask_2_complete".to_string(), Some(new))
        ]
    );
    // The whole history: the uncarried record too, each record once (the original before its
    // carried copy), in thread order.
    let everything = listed(&fake, true).await;
    assert_eq!(
        everything,
        [
            ("clone_complete".to_string(), Some(old)),
            ("subtask_1_complete".to_string(), Some(old)),
            ("subtask_2_complete".to_string(), Some(new))
        ]
    );

    // The same through the binary, from a fresh machine.
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&common::cli::words("list --all --json"));
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let phases: Vec<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["phase"].as_str().unwrap())
        .collect();
    assert_eq!(
        phases,
        ["clone_complete", "subtask_1_complete", "subtask_2_complete"]
    );
}
