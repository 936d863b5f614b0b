//! The Forgejo backend against the fake server: discovery over pages, init, posting, reading,
//! trust, caching and the failure cases.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, MALLORY_TOKEN, client, crowded_with_labelled_decoys};

use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::defaults::LABEL;
use forgestate::format::Record;
use forgestate::scan::Filter;
use forgestate::store::Thread;
use forgestate::{Category, Error};
use serde_json::json;
use std::time::Duration;

fn cp(phase: &str, data: serde_json::Value) -> Record {
    Record::checkpoint("implementation-worker", "s1", phase, data).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn init_creates_exactly_one_issue_among_pages_and_decoys() {
    let fake = FakeForge::start().await;
    crowded_with_labelled_decoys(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    let init = c.thread_raw().init().await.unwrap();
    assert!(init.created, "the first init creates the issue");
    let url = init.location;
    let open = fake.open_issues_titled(TITLE);
    let session: Vec<u64> = {
        let s = fake.state();
        open.iter()
            .copied()
            .filter(|n| {
                s.issues.iter().any(|i| {
                    i.number == *n
                        && i.labels
                            .iter()
                            .any(|l| s.labels.iter().any(|x| x.id == *l && x.name == LABEL))
                })
            })
            .collect()
    };
    assert_eq!(session.len(), 1, "exactly one labelled session issue");
    assert!(url.ends_with(&format!("/issues/{}", session[0])), "{url}");
    let again = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    let found = again.thread_raw().init().await.unwrap();
    assert_eq!(
        found.location, url,
        "init is idempotent, even without a cache"
    );
    assert!(!found.created, "a second init finds the issue");
    assert_eq!(
        fake.open_issues_titled(TITLE).len(),
        2,
        "the session issue and the untouched decoy"
    );
    let issue = fake
        .state()
        .issues
        .iter()
        .find(|i| i.number == session[0])
        .cloned()
        .unwrap();
    assert!(
        issue.body.contains("How to read this thread"),
        "body from templates/session-issue.md"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn discovery_walks_every_page() {
    let fake = FakeForge::start().await;
    let label = crowded_with_labelled_decoys(&fake);
    // Created first, so it sorts last (newest first): on page 3 of 3.
    let target = {
        let n = fake.add_issue(TITLE, &[label], false);
        let mut s = fake.state();
        let row = s.issues.iter_mut().find(|i| i.number == n).unwrap();
        row.created -= 3600;
        n
    };
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    c.post(cp("clone_complete", json!({"issue_number": 42})))
        .await
        .unwrap();
    assert_eq!(
        fake.comments_on(target).len(),
        1,
        "posted to the issue found on the last page"
    );
    let pages: Vec<String> = fake
        .requests()
        .await
        .iter()
        .filter(|r| r.url.path().ends_with("/issues") && r.method.as_str() == "GET")
        .map(|r| r.url.query().unwrap_or("").to_string())
        .collect();
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert!(
        pages.iter().all(|q| q.contains("limit=5")
            && q.contains("type=issues")
            && q.contains("state=open"))
    );
    assert!(
        !pages.iter().any(|q| q.contains("q=")),
        "never the fuzzy search"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn post_then_read_back_latest_resume_list() {
    let fake = FakeForge::start().await;
    crowded_with_labelled_decoys(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    let posted = c
        .post(cp("clone_complete", json!({"branch_name": "b"})))
        .await
        .unwrap();
    assert!(
        posted.url.as_deref().unwrap().contains("#issuecomment-"),
        "{posted:?}"
    );
    c.post(cp(
        "subtask_3_complete",
        json!({"branch_name": "b", "completed_subtasks": [1, 2, 3]}),
    ))
    .await
    .unwrap();
    let health = Record::health(
        "orchestrator",
        "s1",
        "Active",
        json!({"queue_depth": 2}),
        Some("in 10 iterations"),
    )
    .unwrap();
    c.post(health).await.unwrap();

    let resume = c
        .resume("implementation-worker", "s1")
        .await
        .unwrap()
        .resume;
    assert_eq!(resume.resume_point, "phase_2_continue");
    assert_eq!(resume.data["completed_subtasks"], json!([1, 2, 3]));
    let latest = c.latest(&Filter::default()).await.unwrap().record;
    assert_eq!(latest.unwrap().record.agent, "orchestrator");
    let all = c.list(&Filter::default(), None).await.unwrap();
    assert_eq!(all.entries.len(), 3);
    assert_eq!(all.entries[0].comment.author, "ca-bot");
    assert!(
        all.entries
            .windows(2)
            .all(|w| w[0].comment.id < w[1].comment.id)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn steady_state_checkpoint_is_one_request() {
    let fake = FakeForge::start().await;
    crowded_with_labelled_decoys(&fake);
    let dir = tempfile::tempdir().unwrap();
    client(&fake, BOT_TOKEN, dir.path())
        .build()
        .unwrap()
        .post(cp("clone_complete", json!({})))
        .await
        .unwrap();
    let before = fake.requests().await.len();
    // A new client (a new process, in effect) with the same cache directory.
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    c.post(cp("subtask_1_complete", json!({}))).await.unwrap();
    let made: Vec<String> = fake.requests().await[before..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(
        made[0].starts_with("POST ") && made[0].ends_with("/comments"),
        "{made:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_newer_checkpoint_does_not_change_resume() {
    let fake = FakeForge::start().await;
    crowded_with_labelled_decoys(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bot = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    bot.post(cp("clone_complete", json!({"branch_name": "real"})))
        .await
        .unwrap();
    let mut forged = cp(
        "pr_created",
        json!({"branch_name": "evil", "pr_number": 666}),
    );
    forged.id = Some("ffffffff-ffff-7fff-bfff-ffffffffffff".into());
    let mallory = client(&fake, MALLORY_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    mallory
        .post(forged)
        .await
        .expect("anyone who can read the issue can comment");

    let resume = bot
        .resume("implementation-worker", "s1")
        .await
        .unwrap()
        .resume;
    assert_eq!(resume.phase, "clone_complete");
    assert_eq!(resume.data["branch_name"], "real");
    let scan = bot.scan().await.unwrap();
    let untrusted: Vec<_> = scan
        .rejected
        .iter()
        .filter(|r| r.code.code() == "untrusted")
        .collect();
    assert_eq!(untrusted.len(), 1);
    assert_eq!(untrusted[0].comment.author, "mallory");
    let extended = client(&fake, BOT_TOKEN, dir.path())
        .trusted_authors(["mallory".to_string()])
        .build()
        .unwrap();
    let resume = extended
        .resume("implementation-worker", "s1")
        .await
        .unwrap()
        .resume;
    assert_eq!(
        resume.phase, "pr_created",
        "trusted_authors extends the trusted set"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_concurrent_inits_leave_one_open_issue() {
    let fake = FakeForge::start().await;
    fake.add_label(LABEL);
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (
        client(&fake, BOT_TOKEN, d1.path()).build().unwrap(),
        client(&fake, BOT_TOKEN, d2.path()).build().unwrap(),
    );
    let (ra, rb) = tokio::join!(a.thread_raw().init(), b.thread_raw().init());
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_eq!(ra.location, rb.location, "both converge on the same issue");
    assert!(
        ra.created != rb.created,
        "exactly one of them created it: {ra:?} {rb:?}"
    );
    assert_eq!(fake.open_issues_titled(TITLE).len(), 1);
    let issues = fake.state().issues.clone();
    if issues.len() == 2 {
        let dup = issues
            .iter()
            .find(|i| i.closed)
            .expect("the duplicate is closed");
        let note = fake.comments_on(dup.number);
        assert_eq!(note.len(), 1);
        assert!(note[0].body.contains("duplicate of #"), "{}", note[0].body);
    }
    a.post(cp("p", json!({}))).await.unwrap();
    b.post(cp("q", json!({}))).await.unwrap();
    let open = fake.open_issues_titled(TITLE)[0];
    let posted: Vec<_> = fake
        .state()
        .comments
        .iter()
        .filter(|c| c.body.starts_with("[CHECKPOINT]"))
        .map(|c| c.issue)
        .collect();
    assert_eq!(posted, [open, open], "nothing is posted to a duplicate");
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_inits_race_through_creation() {
    // Every racer passes discovery before any creates, the race the real server allows: the
    // issue lists are answered (as they stood when asked) 300 ms late, so a racer whose search
    // arrives within that window of the first one's finds no issue, on a loaded machine too.
    let mut raced = 0;
    for _ in 0..3 {
        let fake = FakeForge::start().await;
        fake.state()
            .path_delays
            .push(("/issues".into(), Duration::from_millis(300)));
        let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let clients: Vec<_> = dirs
            .iter()
            .map(|d| client(&fake, BOT_TOKEN, d.path()).build().unwrap())
            .collect();
        let (x, y, z) = tokio::join!(
            clients[0].thread_raw().init(),
            clients[1].thread_raw().init(),
            clients[2].thread_raw().init()
        );
        let inits: Vec<_> = [x, y, z].into_iter().map(Result::unwrap).collect();
        let creators = inits.iter().filter(|i| i.created).count();
        assert_eq!(creators, 1, "the racers that lost say found: {inits:?}");
        let urls: std::collections::BTreeSet<String> =
            inits.into_iter().map(|i| i.location).collect();
        assert_eq!(urls.len(), 1, "{urls:?}");
        assert_eq!(fake.open_issues_titled(TITLE).len(), 1);
        let labels = fake
            .state()
            .labels
            .iter()
            .filter(|l| l.name == LABEL)
            .count();
        assert_eq!(labels, 1, "a label created twice is reduced to one");
        let created = fake.state().issues.len();
        if created > 1 {
            raced += 1;
            let closed: Vec<_> = fake
                .state()
                .issues
                .iter()
                .filter(|i| i.closed)
                .map(|i| i.number)
                .collect();
            assert_eq!(closed.len(), created - 1);
            for n in closed {
                assert!(fake.comments_on(n)[0].body.contains("duplicate of #"));
            }
        }
    }
    assert!(
        raced > 0,
        "at least one round created duplicates and converged"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn non_writer_init_is_a_permission_error_and_leaves_no_open_issue() {
    let fake = FakeForge::start().await;
    fake.add_label(LABEL);
    let c = client(&fake, MALLORY_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    let err = c.thread_raw().init().await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("write access"), "{msg}");
    assert_eq!(Error::from(err).category(), Category::Config);
    assert!(
        fake.open_issues_titled(TITLE).is_empty(),
        "the unlabelled issue was closed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn several_session_issues_use_the_lowest_number() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let low = fake.add_issue(TITLE, &[label], false);
    let high = fake.add_issue(TITLE, &[label], false);
    let c = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    c.post(cp("p", json!({}))).await.unwrap();
    assert_eq!(fake.comments_on(low).len(), 1);
    assert!(fake.comments_on(high).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn gitea_works_too() {
    let fake = FakeForge::start().await;
    fake.state().version = "1.23.0".into();
    let c = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    c.thread_raw().init().await.unwrap();
    c.post(cp("clone_complete", json!({"x": 1}))).await.unwrap();
    let resume = c
        .resume("implementation-worker", "s1")
        .await
        .unwrap()
        .resume;
    assert_eq!(resume.resume_point, "phase_2_subtasks");
}

#[tokio::test(flavor = "multi_thread")]
async fn trust_follows_the_token_in_use_not_a_cached_login() {
    let fake = FakeForge::start().await;
    crowded_with_labelled_decoys(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bot = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    bot.post(cp("clone_complete", json!({}))).await.unwrap();
    assert_eq!(
        bot.resume("implementation-worker", "s1")
            .await
            .unwrap()
            .resume
            .phase,
        "clone_complete"
    );
    // Same machine, same cache directory, another token.
    let other = fake_forge::client_trusting(&fake.uri(), MALLORY_TOKEN, dir.path())
        .build()
        .unwrap();
    // Nor is ca-bot's issue: as on a cold read, there is no session thread mallory trusts
    // (the cached issue number is checked again under the new token).
    let err = other
        .resume("implementation-worker", "s1")
        .await
        .expect_err("ca-bot's records are not trusted under mallory's token");
    assert!(err.to_string().contains("no open issue titled"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_duplicated_label_name_does_not_hide_the_session_issue() {
    let fake = FakeForge::start().await;
    fake.state().max_response_items = 5;
    let label = fake.add_label(LABEL);
    for n in 0..7 {
        fake.add_issue(&format!("task {n}"), &[], false);
    }
    let session = fake.add_issue(TITLE, &[label], false);
    // Someone creates a second label with the same name: the server's label filter now requires
    // both copies, and the session issue carries one.
    fake.add_label(LABEL);

    let reader = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    let resume = reader
        .resume("implementation-worker", "s1")
        .await
        .expect("a read finds the session issue, not \"run forgestate init\"")
        .resume;
    assert_eq!(resume.phase, "fresh_start");

    let writer = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    writer.post(cp("clone_complete", json!({}))).await.unwrap();
    assert_eq!(fake.comments_on(session).len(), 1);
    let titled = fake
        .state()
        .issues
        .iter()
        .filter(|i| i.title == TITLE)
        .count();
    assert_eq!(titled, 1, "no second session issue, not even a closed one");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_issue_number_is_not_used_after_the_title_setting_changes() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let old = fake.add_issue(TITLE, &[label], false);
    let new = fake.add_issue("Build Session B", &[label], false);
    let dir = tempfile::tempdir().unwrap();
    client(&fake, BOT_TOKEN, dir.path())
        .build()
        .unwrap()
        .post(cp("p", json!({})))
        .await
        .unwrap();
    assert_eq!(fake.comments_on(old).len(), 1);
    // Same cache directory, new title: the very next post goes to the issue with that title.
    let renamed = client(&fake, BOT_TOKEN, dir.path())
        .issue("Build Session B", LABEL)
        .build()
        .unwrap();
    renamed.post(cp("q", json!({}))).await.unwrap();
    assert_eq!(fake.comments_on(new).len(), 1);
    assert_eq!(fake.comments_on(old).len(), 1);
}
