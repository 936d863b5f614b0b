//! The session issue's lifecycle on the fake forge: creation that survives a lost answer, sixteen
//! agents starting at once on a fresh repository, and a closed session issue whose history stays
//! readable through the link its successor carries.

use crate::fake_forge;
use fake_forge::dropper::Dropper;
use fake_forge::{BOT_TOKEN, FakeForge, Fault, client, client_at};

use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::{Kind, Record};
use forgestate::scan::Filter;
use serde_json::json;
use std::time::Duration;

use forgestate::defaults::LABEL;
const WORKER: &str = "implementation-worker";

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase_was": phase})).unwrap()
}

/// Every issue with the session title, open or closed, lowest number first.
fn issues_titled(fake: &FakeForge) -> Vec<fake_forge::IssueRow> {
    let mut all: Vec<_> = fake
        .state()
        .issues
        .iter()
        .filter(|i| i.title == TITLE)
        .cloned()
        .collect();
    all.sort_by_key(|i| i.number);
    all
}

fn labels_named(fake: &FakeForge) -> Vec<i64> {
    let s = fake.state();
    s.labels
        .iter()
        .filter(|l| l.name == LABEL)
        .map(|l| l.id)
        .collect()
}

/// Closes an issue the way a human does in the web UI.
/// Closes issue `number` by hand, an hour ago: what it holds is older than any issue created
/// next by more than the margin a cold read of the chain merges, so it is history that is found
/// by following the link back.
fn close(fake: &FakeForge, number: u64) {
    {
        let mut s = fake.state();
        let now = s.now();
        let row = s.issue_mut(number).expect("issue exists");
        row.closed = true;
        row.closed_at = Some(now);
        row.updated = now;
    }
    fake.age(3600);
}

fn only_open(fake: &FakeForge) -> u64 {
    let open = fake.open_issues_titled(TITLE);
    assert_eq!(open.len(), 1, "exactly one open session issue: {open:?}");
    open[0]
}

fn worker_filter() -> Filter {
    Filter {
        agent: Some(WORKER.into()),
        session: Some("s1".into()),
        kind: Some(Kind::Checkpoint),
        since: None,
    }
}

// ---- item 5: idempotent issue creation -------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_answer_to_the_issue_creation_leaves_exactly_one_issue() {
    let fake = FakeForge::start().await;
    let proxy = Dropper::start_matching(fake.addr(), 1, "POST ", "/issues").await;
    let dir = tempfile::tempdir().unwrap();
    let c = client_at(&proxy.uri(), BOT_TOKEN, dir.path())
        .timeouts(Duration::from_secs(1), Duration::from_secs(2))
        .retry_budget(Duration::from_secs(4))
        .build()
        .unwrap();
    let posted = c.post(cp(WORKER, "s1", "clone_complete")).await.unwrap();
    assert_eq!(
        proxy.drops.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the proxy hung up on the issue creation"
    );
    let all = issues_titled(&fake);
    assert_eq!(
        all.len(),
        1,
        "one issue created, not a second one after the lost answer: {:?}",
        all.iter().map(|i| (i.number, i.closed)).collect::<Vec<_>>()
    );
    assert!(!all[0].closed);
    let comments = fake.comments_on(all[0].number);
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].id, posted.comment_id);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_creation_whose_answer_comes_too_late_is_not_repeated() {
    let fake = FakeForge::start().await;
    fake.inject("/issues", Fault::CommitThenDelay(Duration::from_secs(3)));
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .timeouts(Duration::from_secs(1), Duration::from_secs(1))
        .retry_budget(Duration::from_secs(4))
        .build()
        .unwrap();
    c.post(cp(WORKER, "s1", "clone_complete")).await.unwrap();
    let all = issues_titled(&fake);
    assert_eq!(
        all.len(),
        1,
        "the timed-out creation was committed and adopted"
    );
    assert_eq!(fake.comments_on(all[0].number).len(), 1);
}

// ---- item 6: concurrent first runs -----------------------------------------------------------

/// Sixteen agents, each with its own cache, post their first record to a repository with neither
/// the label nor the session issue. Returns how many records were posted.
async fn sixteen_first_runs(fake: &FakeForge) -> Vec<u64> {
    let dirs: Vec<tempfile::TempDir> = (0..16).map(|_| tempfile::tempdir().unwrap()).collect();
    let clients: Vec<_> = dirs
        .iter()
        .map(|dir| client(fake, BOT_TOKEN, dir.path()).build().unwrap())
        .collect();
    // All start at the same moment, as sixteen agents launched together do.
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(clients.len()));
    let mut tasks = Vec::new();
    for (i, c) in clients.into_iter().enumerate() {
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            c.post(cp(&format!("worker-{i}"), "s1", "clone_complete"))
                .await
                .map(|p| p.comment_id)
                .map_err(|e| e.to_string())
        }));
    }
    let mut posted = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(id) => posted.push(id),
            Err(e) => panic!("a first run failed: {e}"),
        }
    }
    posted
}

#[tokio::test(flavor = "multi_thread")]
async fn sixteen_concurrent_first_runs_all_post_to_one_issue() {
    let fake = FakeForge::start().await;
    let posted = sixteen_first_runs(&fake).await;
    assert_eq!(posted.len(), 16);
    let n = only_open(&fake);
    let on_issue: Vec<u64> = fake.comments_on(n).iter().map(|c| c.id).collect();
    for id in &posted {
        assert!(
            on_issue.contains(id),
            "comment {id} is on the session issue"
        );
    }
    let labels = labels_named(&fake);
    assert_eq!(
        labels.len(),
        1,
        "one label left on the repository: {labels:?}"
    );
    let issue = fake
        .state()
        .issues
        .iter()
        .find(|i| i.number == n)
        .cloned()
        .unwrap();
    assert_eq!(issue.labels, labels, "the issue carries the label once");
}

#[tokio::test(flavor = "multi_thread")]
async fn sixteen_first_runs_all_post_even_when_every_label_cleanup_fails() {
    let fake = FakeForge::start().await;
    for id in 10..80 {
        fake.inject(&format!("/labels/{id}"), Fault::Status(403));
    }
    let posted = sixteen_first_runs(&fake).await;
    assert_eq!(posted.len(), 16);
    let n = only_open(&fake);
    assert_eq!(fake.comments_on(n).len(), 16);
    let issue = fake
        .state()
        .issues
        .iter()
        .find(|i| i.number == n)
        .cloned()
        .unwrap();
    assert_eq!(issue.labels.len(), 1, "not sixteen copies of the label");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_cleanup_of_a_racing_label_never_fails_the_record() {
    let fake = FakeForge::start().await;
    // A concurrent init creates the label just before ours (id 10, ours 11); deleting ours fails.
    fake.inject("/labels", Fault::Twice);
    for _ in 0..3 {
        fake.inject("/labels/11", Fault::Status(500));
    }
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .retry_budget(Duration::from_secs(1))
        .build()
        .unwrap();
    c.post(cp(WORKER, "s1", "clone_complete")).await.unwrap();
    let n = only_open(&fake);
    assert_eq!(fake.comments_on(n).len(), 1);
    let issue = issues_titled(&fake).remove(0);
    assert_eq!(
        issue.labels,
        vec![10],
        "the issue carries the surviving label"
    );
}

// ---- item 8: a closed session issue keeps its history ----------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_session_issue_keeps_its_history() {
    let fake = FakeForge::start().await;
    let (da, db, dc) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let a = client(&fake, BOT_TOKEN, da.path()).build().unwrap();
    a.post(cp(WORKER, "s1", "subtask_3_complete"))
        .await
        .unwrap();
    let first = only_open(&fake);
    close(&fake, first);

    // Another agent's next record opens a new session issue, which links the closed one.
    let b = client(&fake, BOT_TOKEN, db.path()).build().unwrap();
    b.post(cp("reviewer", "s2", "review_started"))
        .await
        .unwrap();
    let second = only_open(&fake);
    assert_ne!(second, first);
    let body = issues_titled(&fake)
        .into_iter()
        .find(|i| i.number == second)
        .unwrap()
        .body;
    assert!(
        body.contains(&format!("Previous session issue: #{first}")),
        "{body}"
    );
    assert!(
        body.contains("How to read this thread"),
        "still the template"
    );

    // The worker's unfinished work is not a fresh start.
    let b_answer = b.resume(WORKER, "s1").await.unwrap();
    let (resume, warnings) = (b_answer.resume, b_answer.warnings);
    assert_eq!(resume.phase, "subtask_3_complete");
    assert_eq!(resume.resume_point, "phase_2_continue");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(&format!("previous session issue #{first} (closed)"))),
        "{warnings:?}"
    );

    // The worker's cache is still inside its recheck window: its next record lands on #first.
    a.post(cp(WORKER, "s1", "subtask_4_complete"))
        .await
        .unwrap();
    assert_eq!(fake.comments_on(first).len(), 2);
    let c = client(&fake, BOT_TOKEN, dc.path()).build().unwrap();
    let c_answer = c.resume(WORKER, "s1").await.unwrap();
    let (resume, _) = (c_answer.resume, c_answer.warnings);
    assert_eq!(
        resume.phase, "subtask_4_complete",
        "found, though posted late"
    );
    let c_answer = c.latest(&worker_filter()).await.unwrap();
    let (latest, warnings) = (c_answer.record, c_answer.warnings);
    let latest = latest.expect("the late post is on a member of the chain");
    assert_eq!(latest.comment.id, Some(fake.comments_on(first)[1].id));
    assert_eq!(latest.comment.issue, Some(first), "it says where it is");
    assert!(
        warnings.is_empty(),
        "merged, not found by following: {warnings:?}"
    );
    // The late post is merged with the head; the history from before the successor was created
    // is reached by following the link when the chain holds nothing for the question.
    let listed = c.list(&worker_filter(), None).await.unwrap();
    let phases: Vec<String> = listed
        .entries
        .iter()
        .map(|e| e.record.phase().unwrap_or_default().to_string())
        .collect();
    assert_eq!(phases, ["subtask_4_complete"]);

    // What the current issue has is answered from it, without following anything.
    let c_answer = c.resume("reviewer", "s2").await.unwrap();
    let (resume, warnings) = (c_answer.resume, c_answer.warnings);
    assert_eq!(resume.phase, "review_started");
    assert!(warnings.is_empty(), "{warnings:?}");
    // A session nobody ever saw is still a fresh start.
    let c_answer = c.resume(WORKER, "never").await.unwrap();
    let (resume, _) = (c_answer.resume, c_answer.warnings);
    assert_eq!(resume.phase, "fresh_start");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_that_finds_the_cached_issue_closed_opens_a_linked_successor() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let rechecking = || {
        client(&fake, BOT_TOKEN, dir.path())
            .recheck_after(Duration::ZERO)
            .build()
            .unwrap()
    };
    rechecking()
        .post(cp(WORKER, "s1", "subtask_3_complete"))
        .await
        .unwrap();
    let first = only_open(&fake);
    close(&fake, first);
    let c = rechecking();
    c.post(cp("reviewer", "s2", "review_started"))
        .await
        .unwrap();
    let second = only_open(&fake);
    assert_ne!(second, first);
    let all = issues_titled(&fake);
    assert_eq!(all.len(), 2);
    assert!(
        all[1]
            .body
            .contains(&format!("Previous session issue: #{first}"))
    );
    assert_eq!(all[1].labels, all[0].labels, "the same label");
    let c_answer = c.resume(WORKER, "s1").await.unwrap();
    let (resume, _) = (c_answer.resume, c_answer.warnings);
    assert_eq!(resume.phase, "subtask_3_complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn links_are_followed_as_far_back_as_the_chain_goes() {
    let fake = FakeForge::start().await;
    // Five generations: each agent posts once, then its issue is closed.
    let dirs: Vec<tempfile::TempDir> = (0..6).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut numbers = Vec::new();
    for (g, dir) in dirs.iter().take(5).enumerate() {
        client(&fake, BOT_TOKEN, dir.path())
            .build()
            .unwrap()
            .post(cp(&format!("agent-{g}"), "s", "done"))
            .await
            .unwrap();
        let n = only_open(&fake);
        numbers.push(n);
        if g < 4 {
            close(&fake, n);
        }
    }
    let c = client(&fake, BOT_TOKEN, dirs[5].path()).build().unwrap();
    let c_answer = c.resume("agent-1", "s").await.unwrap();
    let (r, w) = (c_answer.resume, c_answer.warnings);
    assert_eq!(r.phase, "done", "three hops back from the newest");
    assert!(
        w.iter().any(|w| w.contains(&format!("#{}", numbers[1]))),
        "{w:?}"
    );
    // Four hops back: a session idle through four closed heads is still found (issue #27).
    let c_answer = c.resume("agent-0", "s").await.unwrap();
    let (r, w) = (c_answer.resume, c_answer.warnings);
    assert_eq!(r.phase, "done", "four hops back from the newest");
    assert!(
        w.iter()
            .any(|w| w.contains(&format!("#{}", numbers[0])) && w.contains("4 links back")),
        "{w:?}"
    );
    assert_eq!(
        c.resume("nobody", "s").await.unwrap().resume.phase,
        "fresh_start"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_to_an_issue_that_is_not_a_session_issue_is_not_followed() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    client(&fake, BOT_TOKEN, dir.path())
        .build()
        .unwrap()
        .post(cp(WORKER, "s1", "subtask_3_complete"))
        .await
        .unwrap();
    let first = only_open(&fake);
    {
        let mut s = fake.state();
        let row = s.issue_mut(first).unwrap();
        // Not a session issue any more: another title and another body (a person's issue; an
        // issue of ours that only lost its title is still a member, see attack_chain.rs).
        row.title = "something else".into();
        row.body = "A person's notes.".into();
        row.closed = true;
    }
    let label = labels_named(&fake)[0];
    let second = fake.add_issue(TITLE, &[label], false);
    fake.state().issue_mut(second).unwrap().body = format!("Previous session issue: #{first}\n");
    let fresh = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, fresh.path()).build().unwrap();
    let c_answer = c.resume(WORKER, "s1").await.unwrap();
    let (r, _) = (c_answer.resume, c_answer.warnings);
    assert_eq!(r.phase, "fresh_start");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_before_any_successor_exists_reads_the_closed_issue() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    client(&fake, BOT_TOKEN, dir.path())
        .build()
        .unwrap()
        .post(cp(WORKER, "s1", "subtask_3_complete"))
        .await
        .unwrap();
    let first = only_open(&fake);
    close(&fake, first);
    let fresh = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, fresh.path()).build().unwrap();
    let c_answer = c.resume(WORKER, "s1").await.unwrap();
    let (r, _) = (c_answer.resume, c_answer.warnings);
    assert_eq!(
        r.phase, "subtask_3_complete",
        "not an error, not a fresh start"
    );
    assert_eq!(issues_titled(&fake).len(), 1, "reads create nothing");
    // The next write still opens a successor rather than writing to the closed issue.
    c.post(cp("reviewer", "s2", "review_started"))
        .await
        .unwrap();
    let second = only_open(&fake);
    assert_ne!(second, first);
    assert_eq!(fake.comments_on(first).len(), 1);
}
