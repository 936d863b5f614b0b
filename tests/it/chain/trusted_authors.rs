//! A chain only the trusted authors can extend: an issue another account opened with the
//! session title, label and a `Previous session issue: #1` line is never adopted as the head,
//! never closes the real one, is never taken as a rotation's successor, and is named in a
//! warning in the answer; a retitled head beside such a look-alike stays the thread.

use crate::common::cli::{Bin, stderr, words};
use crate::fake_forge::{self, BOT_TOKEN, FakeForge, OWNER, REPO, bot};
use forgestate::defaults::TITLE;
use forgestate::format::Record;
use serde_json::{Value, json};

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s1", phase, json!({"phase": phase})).unwrap()
}

/// An issue opened by `ca-ops` (a person with write access) that looks like a successor of #1.
fn look_alike(fake: &FakeForge, of: u64) -> u64 {
    let label = fake.state().labels[0].id;
    let n = fake.add_issue(TITLE, &[label], false);
    let mut s = fake.state();
    let row = s.issue_mut(n).unwrap();
    row.poster = 13;
    row.body = format!("Previous session issue: #{of}\n\nlooks official");
    n
}

#[tokio::test(flavor = "multi_thread")]
async fn a_look_alike_by_another_account_never_becomes_the_head() {
    let fake = FakeForge::start().await;
    let head = fake_forge::session(&fake);
    let w = tempfile::tempdir().unwrap();
    bot(&fake, w.path()).save(cp("p1")).await.posted().unwrap();
    let fake_head = look_alike(&fake, head);

    // A fresh machine writes to the real head and leaves it open.
    let fresh = tempfile::tempdir().unwrap();
    let c = bot(&fake, fresh.path());
    let posted = c.save(cp("p2")).await.posted().unwrap();
    let on = forgestate::store::issue_in_url(posted.url.as_deref().unwrap()).unwrap();
    assert_eq!(on, head, "posted on the look-alike");
    let real = fake
        .state()
        .issues
        .iter()
        .find(|i| i.number == head)
        .map(|i| i.closed);
    assert_eq!(real, Some(false), "the real head was closed");
    assert!(fake.comments_on(fake_head).is_empty());

    // Its answers name the look-alike.
    let resumed = c.resume("w", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "p2");
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words("resume --agent w --session s1 --json"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["phase"], "p2", "{doc:#}");
    let named = format!("issue #{fake_head} has the session title");
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains(&named)),
        "{doc:#}"
    );

    // `doctor` names it too.
    let out = Bin::new(dir.path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words("doctor"));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        said.contains(&format!("look-alike issues #{fake_head}")),
        "{said}"
    );

    // A rotation creates its own successor instead of adopting the look-alike.
    let rotation = c.rotate().await.unwrap();
    let to = rotation.to.unwrap();
    assert!(rotation.created, "{rotation:?}");
    assert_ne!(to, fake_head, "{rotation:?}");
    assert!(fake.comments_on(fake_head).is_empty());
    let fresh = tempfile::tempdir().unwrap();
    assert_eq!(
        bot(&fake, fresh.path())
            .resume("w", "s1")
            .await
            .unwrap()
            .resume
            .phase,
        "p2"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retitled_head_beside_a_look_alike_stays_the_thread() {
    let fake = FakeForge::start().await;
    // The bot's own session issue, as `init` makes it (its body is the session issue's).
    let dir = tempfile::tempdir().unwrap();
    let (init, _) = bot(&fake, dir.path()).init().await.unwrap();
    let head = forgestate::store::issue_in_url(&init.location).unwrap();
    let w = tempfile::tempdir().unwrap();
    bot(&fake, w.path()).save(cp("p1")).await.posted().unwrap();
    fake.retitle(head, "Build session (renamed by a person)");
    let fake_head = look_alike(&fake, head);

    let fresh = tempfile::tempdir().unwrap();
    let c = bot(&fake, fresh.path());
    let resumed = c.resume("w", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "p1", "{resumed:?}");
    let posted = c.save(cp("p2")).await.posted().unwrap();
    let on = forgestate::store::issue_in_url(posted.url.as_deref().unwrap()).unwrap();
    assert_eq!(on, head);
    assert!(fake.comments_on(fake_head).is_empty());
    let out = Bin::new(fresh.path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words("doctor"));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        said.contains(&format!("the head #{head} no longer has")),
        "{said}"
    );
    assert!(
        said.contains(&format!("look-alike issues #{fake_head}")),
        "{said}"
    );
}
