//! A person edits the session issue past recognition (hatk4 A1): retitles it and edits its
//! description, or rewrites its description and takes the label away. No session mark and no
//! session body is left, yet it is still the session issue: a trusted author opened it and
//! wrote records in it. A machine with no cache must find it (not open a second issue beside
//! it), the machine with it cached and a fresh one must write to the same issue, and a fresh
//! reader must read its records. An issue another account opened is never taken, and a write
//! that opens a new issue although records sit on such an issue says so.

use crate::common::cli::{Bin, stderr, words};
use crate::fake_forge::{self, BOT_TOKEN, FakeForge, OPS_TOKEN, OWNER, REPO, bot};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::json;

fn cp(phase: &str) -> Record {
    Record::checkpoint("a", "s1", phase, json!({"phase": phase})).unwrap()
}

async fn saved(c: &Client<AnyThread>, phase: &str) {
    c.save(cp(phase)).await.posted().unwrap();
}

/// Runs `line` on a machine that never saw the thread; it succeeds. Its stderr.
fn ran_fresh(fake: &FakeForge, line: &str) -> String {
    let out = Bin::new(tempfile::tempdir().unwrap().path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words(line));
    assert!(out.status.success(), "{line}: {}", stderr(&out));
    stderr(&out)
}

/// The numbers of the open issues.
fn open_issues(fake: &FakeForge) -> Vec<u64> {
    let s = fake.state();
    s.issues
        .iter()
        .filter(|i| !i.closed)
        .map(|i| i.number)
        .collect()
}

/// How many comments on issue `n` are records of phase `phase`.
fn on(fake: &FakeForge, n: u64, phase: &str) -> usize {
    let line = format!("Phase: {phase}\n");
    let comments = fake.comments_on(n);
    comments.iter().filter(|c| c.body.contains(&line)).count()
}

/// The phases a machine that never saw the thread lists for agent `a`, in thread order.
async fn fresh_phases(fake: &FakeForge) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let filter = Filter {
        agent: Some("a".into()),
        ..Filter::default()
    };
    let listed = bot(fake, dir.path()).list(&filter, None).await.unwrap();
    (listed.entries.iter())
        .map(|e| e.record.phase().unwrap_or_default().to_string())
        .collect()
}

/// The repro's edit: a line appended to the description, and a new title.
fn retitle_and_append(fake: &FakeForge, n: u64) {
    let body = fake.issue_body(n);
    fake.edit_issue_body(n, &format!("{body}\n\nOwner: infra team."));
    fake.retitle(n, "Build session (agents)");
}

/// A person rewrites the description and deletes the session label from the repository.
fn rewrite_and_delete_label(fake: &FakeForge) {
    fake.edit_issue_body(1, "Build session notes, owned by the infra team.");
    let mut s = fake.state();
    s.labels.clear();
    for i in &mut s.issues {
        i.labels.clear();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retitled_and_redescribed_head_is_found_by_a_fresh_machine() {
    let fake = FakeForge::start().await;
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p1").await;
    assert_eq!(open_issues(&fake), [1]);
    retitle_and_append(&fake, 1);
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p2").await;
    assert_eq!(open_issues(&fake), [1], "a second session issue was opened");
    assert_eq!(on(&fake, 1, "p2"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_unlabelled_and_redescribed_is_found_by_a_fresh_machine() {
    let fake = FakeForge::start().await;
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p1").await;
    rewrite_and_delete_label(&fake);
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p2").await;
    assert_eq!(open_issues(&fake), [1], "a second session issue was opened");
    assert_eq!(on(&fake, 1, "p2"), 1);
    assert_eq!(fresh_phases(&fake).await, ["p1", "p2"]);
}

/// Machine A has #1 cached, machine B none: both write to #1, and a fresh reader reads all.
#[tokio::test(flavor = "multi_thread")]
async fn the_cached_and_the_fresh_machine_write_to_the_same_issue() {
    let fake = FakeForge::start().await;
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    saved(&bot(&fake, a_dir.path()), "p1").await;
    retitle_and_append(&fake, 1);
    saved(&bot(&fake, b_dir.path()), "p2").await;
    saved(&bot(&fake, a_dir.path()), "p3").await;
    saved(&bot(&fake, b_dir.path()), "p4").await;
    assert_eq!(open_issues(&fake), [1], "the thread split");
    for phase in ["p1", "p2", "p3", "p4"] {
        assert_eq!(on(&fake, 1, phase), 1, "{phase} on #1");
    }
    assert_eq!(fresh_phases(&fake).await, ["p1", "p2", "p3", "p4"]);
}

/// `resume --refresh` on a machine that never saw the thread answers #1's newest record (it
/// said there was no session issue), and says the issue was edited.
#[tokio::test(flavor = "multi_thread")]
async fn resume_refresh_on_a_fresh_machine_reads_the_edited_head() {
    let fake = FakeForge::start().await;
    let run = |dir: &std::path::Path, line: &str| {
        let out = Bin::new(dir)
            .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
            .run(&words(line));
        assert!(out.status.success(), "{line}: {}", stderr(&out));
        out
    };
    let a = tempfile::tempdir().unwrap();
    run(a.path(), "checkpoint --agent a --session s1 --phase p1");
    run(a.path(), "checkpoint --agent a --session s1 --phase p2");
    retitle_and_append(&fake, 1);
    let c = tempfile::tempdir().unwrap();
    let out = run(c.path(), "resume --agent a --session s1 --refresh --json");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["phase"], "p2", "{answer}");
    let err = stderr(&out);
    assert!(err.contains("no longer has the session title"), "{err}");
    assert_eq!(open_issues(&fake), [1]);
}

/// An issue another account opened is never taken, though it holds records: a write opens a
/// new session issue, and says where the records it does not hold are.
#[tokio::test(flavor = "multi_thread")]
async fn an_issue_another_account_opened_is_never_taken_and_the_new_one_warns() {
    let fake = FakeForge::start().await;
    // Another bot account (trusting only itself) started the thread; a person then edited it.
    let ops =
        fake_forge::client_trusting(&fake.uri(), OPS_TOKEN, tempfile::tempdir().unwrap().path())
            .build()
            .unwrap();
    saved(&ops, "p1").await;
    fake.edit_issue_body(1, "Build session notes.");
    fake.retitle(1, "Build session (agents)");
    let err = ran_fresh(&fake, "checkpoint --agent a --session s1 --phase p2");
    assert_eq!(open_issues(&fake), [1, 2], "the bot took ca-ops' issue");
    assert_eq!(on(&fake, 2, "p2"), 1);
    assert!(
        err.contains("#1 is not taken") && err.contains("opened by ca-ops"),
        "{err}"
    );
}

/// An issue the bot opened whose comments hold no record (a bot's other work) is not the
/// session issue: the first write opens one.
#[tokio::test(flavor = "multi_thread")]
async fn a_bot_issue_without_records_is_not_taken() {
    let fake = FakeForge::start().await;
    let other = fake.add_issue("Nightly build failed", &[], false);
    fake.add_comment(other, "ca-bot", "Build 42 failed: see the logs.");
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p1").await;
    assert_eq!(open_issues(&fake), [other, other + 1]);
    assert_eq!(on(&fake, other + 1, "p1"), 1);
}

/// Another job of the same bot (hatk6): its own title and description, the generic session
/// label, and a record of the bot's in it. The label alone proves nothing, so the first write
/// of this thread opens its own issue and leaves that one alone, with a warning naming it.
#[tokio::test(flavor = "multi_thread")]
async fn another_job_s_labelled_issue_with_a_record_is_not_taken() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(forgestate::defaults::LABEL);
    let other = fake.add_issue("Weekly dependency report", &[label], false);
    fake.add_comment(other, "ca-bot", "[HEALTH] ci-runner\nStatus: ok");
    for line in ["init", "checkpoint --agent a --session s1 --phase p1"] {
        ran_fresh(&fake, line);
    }
    assert_eq!(open_issues(&fake), [other, other + 1]);
    assert_eq!(on(&fake, other + 1, "p1"), 1);
    assert_eq!(
        fake.comments_on(other).len(),
        1,
        "the other job's issue is left alone"
    );
}

/// The usual look-up costs what it did: with the session issue intact, a fresh machine's
/// write reads no other issue's comments, though the bot's other issues hold comments.
#[tokio::test(flavor = "multi_thread")]
async fn the_usual_look_up_reads_no_other_issue() {
    let fake = FakeForge::start().await;
    let other = fake.add_issue("Nightly build failed", &[], false);
    fake.add_comment(other, "ca-bot", "Build 42 failed: see the logs.");
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p1").await;
    let before = fake.requests().await.len();
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p2").await;
    let requests = fake.requests().await;
    let asked: Vec<String> = requests[before..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    let theirs = format!("/issues/{other}/");
    assert!(!asked.iter().any(|r| r.contains(&theirs)), "{asked:#?}");
    let unfiltered = requests[before..].iter().filter(|r| {
        r.url.path().ends_with("/issues")
            && r.method.as_str() == "GET"
            && !r.url.query_pairs().any(|(k, _)| k == "labels")
    });
    assert_eq!(unfiltered.count(), 0, "{asked:#?}");
}

/// A machine whose cache names a recheck-due #1 checks it, finds it edited, and still writes
/// to it rather than open a second issue.
#[tokio::test(flavor = "multi_thread")]
async fn a_machine_rechecking_its_cached_number_keeps_the_edited_head() {
    let fake = FakeForge::start().await;
    let a = tempfile::tempdir().unwrap();
    let rechecking = || {
        fake_forge::client(&fake, BOT_TOKEN, a.path())
            .recheck_after(std::time::Duration::ZERO)
            .build()
            .unwrap()
    };
    saved(&rechecking(), "p1").await;
    rewrite_and_delete_label(&fake);
    saved(&rechecking(), "p2").await;
    assert_eq!(open_issues(&fake), [1], "a second session issue was opened");
    assert_eq!(on(&fake, 1, "p2"), 1);
}

fn cli(fake: &FakeForge, dir: &std::path::Path, line: &str) -> String {
    let out = Bin::new(dir)
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words(line));
    format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out))
}

/// After the edit, doctor on the machine with #1 cached finds #1 too (it said the session
/// issue was the #2 a fresh machine had opened).
#[tokio::test(flavor = "multi_thread")]
async fn doctor_on_the_cached_machine_agrees_with_a_fresh_machine() {
    let fake = FakeForge::start().await;
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    cli(
        &fake,
        a.path(),
        "checkpoint --agent a --session s1 --phase p1",
    );
    retitle_and_append(&fake, 1);
    cli(
        &fake,
        b.path(),
        "checkpoint --agent a --session s1 --phase p2",
    );
    let said = cli(&fake, a.path(), "doctor");
    assert!(!said.contains("but the session issue is"), "{said}");
    assert!(said.contains("#1 cached"), "{said}");
}

/// Doctor's word holds: when it finds the cached number is not the head (another machine
/// rotated), the next write goes to the head, though the cache was still fresh.
#[tokio::test(flavor = "multi_thread")]
async fn after_doctor_names_another_head_the_next_write_goes_there() {
    let fake = FakeForge::start().await;
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    cli(
        &fake,
        a.path(),
        "checkpoint --agent a --session s1 --phase p1",
    );
    let rotated = cli(&fake, b.path(), "rotate");
    assert!(rotated.contains("rotated to #2"), "{rotated}");
    let said = cli(&fake, a.path(), "doctor");
    assert!(
        said.contains("#1 cached, but the session issue is #2"),
        "{said}"
    );
    cli(
        &fake,
        a.path(),
        "checkpoint --agent a --session s1 --phase p2",
    );
    assert_eq!(
        on(&fake, 2, "p2"),
        1,
        "doctor said the next write goes to #2"
    );
    assert_eq!(on(&fake, 1, "p2"), 0);
}

/// Another thread in the same repository (its own title and label, the bot's account) is never
/// joined: the first record of this thread opens its own issue.
#[tokio::test(flavor = "multi_thread")]
async fn another_threads_issue_is_never_taken() {
    let fake = FakeForge::start().await;
    let team_b = fake_forge::client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .issue("Team B build session", "Team/B")
        .build()
        .unwrap();
    saved(&team_b, "b1").await;
    let err = ran_fresh(&fake, "checkpoint --agent a --session s1 --phase p1");
    assert_eq!(open_issues(&fake), [1, 2], "this thread joined team B's");
    assert_eq!(on(&fake, 2, "p1"), 1);
    assert!(!err.contains("not taken"), "{err}");
}

/// A head that lost both marks and its description is not taken (it could be another
/// thread's), but the write that opens a new issue names it.
#[tokio::test(flavor = "multi_thread")]
async fn a_head_that_lost_every_mark_is_named_when_a_new_issue_opens() {
    let fake = FakeForge::start().await;
    saved(&bot(&fake, tempfile::tempdir().unwrap().path()), "p1").await;
    rewrite_and_delete_label(&fake);
    fake.retitle(1, "Build session (agents)");
    let err = ran_fresh(&fake, "checkpoint --agent a --session s1 --phase p2");
    assert_eq!(open_issues(&fake), [1, 2]);
    assert!(
        err.contains("#1 is not taken")
            && err.contains("neither the session title nor the session description"),
        "{err}"
    );
}

/// The thread already split (an older forgestate opened #2 beside the edited #1): the machine
/// with #1 cached moves to #2 on its recheck, and says its records on #1 are left behind.
#[tokio::test(flavor = "multi_thread")]
async fn a_machine_leaving_its_edited_issue_for_another_says_so() {
    let fake = FakeForge::start().await;
    let a = tempfile::tempdir().unwrap();
    let config = a.path().join("recheck.toml");
    std::fs::write(&config, "[forge]\nrecheck_secs = 0\n").unwrap();
    let line = |phase: &str| {
        format!(
            "checkpoint --agent a --session s1 --phase {phase} --config {}",
            config.display()
        )
    };
    cli(&fake, a.path(), &line("p1"));
    rewrite_and_delete_label(&fake);
    fake.retitle(1, "Build session (agents)");
    let label = fake.add_label(forgestate::defaults::LABEL);
    let split = fake.add_issue(forgestate::defaults::TITLE, &[label], false);
    let said = cli(&fake, a.path(), &line("p2"));
    assert_eq!(on(&fake, split, "p2"), 1, "{said}");
    assert!(
        said.contains("session issue #1 is still open")
            && said.contains("records posted to #1 are not read"),
        "{said}"
    );
}
