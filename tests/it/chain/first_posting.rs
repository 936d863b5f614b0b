//! One ordering rule, by first posting: a copy that a rotation carries while an agent writes to
//! the old head lands after the agent's newer record, and must never outrank it. `resume`,
//! `latest`, `status` and `history` all answer the newer record, on the library and through the
//! binary.

use std::time::Duration;

use crate::{common, fake_forge};
use common::cli::{Bin, stderr, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, bot, session};
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::{Value, json};

fn cp(phase: &str) -> Record {
    Record::checkpoint("a", "s1", phase, json!({"phase": phase})).unwrap()
}

/// The race of issue #27: the agent's machine still points at the old head and posts its next
/// record there while a rotation, which read the old head before that post, is carrying the
/// agent's previous record (an hour old) to the new head. The copy lands after the new record.
#[tokio::test(flavor = "multi_thread")]
async fn a_copy_carried_while_the_agent_writes_never_sends_the_session_back() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let w = tempfile::tempdir().unwrap();
    let writer = bot(&fake, w.path());
    writer.save(cp("p1")).await.posted().unwrap();
    fake.age(3600);

    // Every comment list and post answers 600 ms after it is done: the rotation's read of the
    // old head is taken at once, and its copy is posted only after the agent's new record.
    fake.state()
        .path_delays
        .push(("/comments".into(), Duration::from_millis(600)));
    // (A list, not the one-comment page a cold read sizes the repository-wide list by.)
    let asked = |r: &wiremock::Request| {
        r.method.as_str() == "GET"
            && r.url.path().ends_with("/comments")
            && !r.url.query().is_some_and(|q| q.contains("limit=1"))
    };
    let before = fake.requests().await.iter().filter(|r| asked(r)).count();
    let rotating = {
        let dir = tempfile::tempdir().unwrap();
        let fake_uri = fake.uri();
        tokio::spawn(async move {
            let c = fake_forge::client_at(&fake_uri, BOT_TOKEN, dir.path())
                .build()
                .unwrap();
            c.rotate().await
        })
    };
    // The agent posts once the rotation has asked for the old head's comments (its answer is
    // on the way, 600 ms late), however loaded the machine is.
    for _ in 0..500 {
        if fake.requests().await.iter().filter(|r| asked(r)).count() > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    writer.save(cp("p2")).await.posted().unwrap();
    let rotation = rotating.await.unwrap().unwrap();
    fake.state().path_delays.clear();
    let new = rotation.to.unwrap();
    assert_eq!(rotation.carried, 1, "{rotation:?}");

    // The copy really landed after the newer record (else this test shows nothing).
    let on_old = fake.comments_on(old);
    let on_new = fake.comments_on(new);
    let p2 = on_old.iter().find(|c| c.body.contains("p2")).unwrap();
    let copy = on_new
        .iter()
        .find(|c| c.body.contains("p1"))
        .unwrap_or_else(|| panic!("{on_old:?}\n{on_new:?}"));
    assert!(
        copy.id > p2.id,
        "the race did not happen: {on_old:?} {on_new:?}"
    );

    let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
    let resumed = fresh.resume("a", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "p2", "{resumed:?}");
    let latest = fresh
        .latest(&Filter {
            agent: Some("a".into()),
            ..Filter::default()
        })
        .await
        .unwrap();
    assert_eq!(latest.record.unwrap().record.phase(), Some("p2"));
    // The warm machine, whose cache saw the copy arrive after its own record, agrees.
    assert_eq!(writer.resume("a", "s1").await.unwrap().resume.phase, "p2");

    let dir = tempfile::tempdir().unwrap();
    let bin = || Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin().run(&words("resume --agent a --session s1 --json"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["phase"], "p2", "{doc:#}");

    let out = bin().run(&words("status --json"));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["rows"][0]["phase"], "p2", "{doc:#}");
    assert!(
        doc["rows"][0]["age_secs"].as_i64().unwrap() < 600,
        "{doc:#}"
    );

    let out = bin().run(&words("history --session s1 --json"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let phases: Vec<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["phase"].as_str())
        .collect();
    assert_eq!(phases, ["p1", "p2"], "{doc:#}");
}
