//! The chain through the binary: `status --fail-on-stalled` fires for an agent silent for two
//! hours across a rotation, and `list --json` says which issue each record is on.

use crate::{common, fake_forge};
use common::cli::{Bin, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, client, session};
use forgestate::format::Record;
use serde_json::{Value, json};

fn cp(agent: &str, phase: &str) -> Record {
    Record::checkpoint(agent, "s1", phase, json!({"phase": phase})).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn status_fails_on_an_agent_stalled_across_a_rotation_and_list_names_the_issue() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let setup = tempfile::tempdir().unwrap();
    let agent = client(&fake, BOT_TOKEN, setup.path()).build().unwrap();
    agent
        .save(cp("silent", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    fake.age(2 * 3600);
    let rotation = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap()
        .rotate()
        .await
        .unwrap();
    let new = rotation.to.unwrap();
    assert_eq!(rotation.carried, 1);

    let dir = tempfile::tempdir().unwrap();
    let bin = || Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin().run(&words("status --fail-on-stalled --json"));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{} {}",
        stdout(&out),
        stderr(&out)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["rows"][0]["verdict"], "stalled", "{doc:#}");
    assert!(doc["rows"][0]["age_secs"].as_i64().unwrap() >= 2 * 3600);

    let out = bin().run(&words("list --json"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let record = &doc["records"][0];
    assert_eq!(record["comment"]["issue"], json!(new), "{doc:#}");
    assert_eq!(record["carried_from"], json!(old));
    assert!(record["posted_at"].is_string(), "{doc:#}");

    // `-v` names the head and the members a read merged.
    saved_late(&fake, setup.path(), old).await;
    let out = Bin::new(tempfile::tempdir().unwrap().path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words("-v list"));
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "session thread: head #{new}; members in this read: #{old}, #{new}"
        )),
        "{said}"
    );
}

/// A record posted to `old` by the agent whose cached number (in `dir`) still names it.
async fn saved_late(fake: &FakeForge, dir: &std::path::Path, old: u64) {
    let agent = client(fake, BOT_TOKEN, dir).build().unwrap();
    let posted = agent
        .save(cp("silent", "subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    let on_old = fake.comments_on(old);
    assert!(
        on_old
            .iter()
            .any(|c| c.body.contains(posted.id.as_deref().unwrap()))
    );
}
