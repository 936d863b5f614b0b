//! Which lists a cold read takes (docs/forge.md, "Which list a cold read takes"), and that none
//! of its choices misses a record: a late post to a rotated, closed member, a comment older
//! than its issue, a list cut short, a busy repository. Each test reads from a machine that
//! never saw the thread, and checks the fake's request log for what was downloaded.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, bot, client, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use serde_json::json;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s", phase, json!({"phase": phase})).unwrap()
}

fn fresh(fake: &FakeForge) -> (Client<AnyThread>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (client(fake, BOT_TOKEN, dir.path()).build().unwrap(), dir)
}

/// Another issue, opened after the session issue, on which someone else wrote `n` comments: a
/// busy repository, whose repository-wide list since the head was created is mostly theirs.
fn busy(fake: &FakeForge, n: usize) -> u64 {
    let other = fake.add_issue("Release 2.0 discussion", &[], false);
    let filler = "x".repeat(200);
    for i in 0..n {
        fake.add_comment(other, "mallory", &format!("comment {i}: {filler}"));
    }
    other
}

/// The comment lists a read downloaded after the `before`-th request, as path and query (the
/// one-comment page that sizes the repository-wide list is left out: it downloads nothing).
async fn downloads(fake: &FakeForge, before: usize) -> Vec<String> {
    fake.requests()
        .await
        .into_iter()
        .skip(before)
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        .filter(|r| !r.url.query().is_some_and(|q| q.contains("limit=1")))
        .map(|r| match r.url.query() {
            Some(q) => format!("{}?{q}", r.url.path()),
            None => r.url.path().to_string(),
        })
        .collect()
}

const WIDE: &str = "/issues/comments";

/// The phases of agent `w`, in thread order, as a reader that never saw the thread lists them.
async fn phases(c: &Client<AnyThread>) -> Vec<String> {
    let filter = forgestate::scan::Filter {
        agent: Some("w".into()),
        ..Default::default()
    };
    (c.list(&filter, None).await.unwrap().entries.iter())
        .map(|e| e.record.phase().unwrap_or_default().to_string())
        .collect()
}

/// A thread rotated from `#first` to a new head, then a late record posted to `#first` an hour
/// later by a machine whose cached issue number was still fresh. Returns (first, head).
async fn rotated_with_a_late_post(fake: &FakeForge) -> (u64, u64) {
    let first = session(fake);
    let w = tempfile::tempdir().unwrap();
    let writer = bot(fake, w.path());
    writer.save(cp("clone_complete")).await.posted().unwrap();
    let rotated = bot(fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let head = rotated.to.unwrap();
    fake.age(3600);
    let late = writer
        .save(cp("subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let late = late.id.unwrap();
    assert!(
        fake.comments_on(first)
            .iter()
            .any(|c| c.body.contains(&late)),
        "the stale writer posted to #{first}"
    );
    (first, head)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_busy_repository_is_read_through_the_head_s_own_list() {
    let fake = FakeForge::start().await;
    let head = session(&fake);
    let saver = bot(&fake, tempfile::tempdir().unwrap().path());
    let written: Vec<String> = (0..12).map(|i| format!("subtask_{i}_complete")).collect();
    for phase in &written {
        saver.save(cp(phase)).await.posted().unwrap();
    }
    busy(&fake, 2000);
    let before = fake.requests().await.len();
    let (c, _dir) = fresh(&fake);
    assert_eq!(phases(&c).await, written, "every record, once, in order");
    let lists = downloads(&fake, before).await;
    // One download of the head's own list (whole: no `since`), never the 2,000 comments of
    // the other issue.
    assert_eq!(
        lists,
        [format!(
            "/api/v1/repos/{}/{}/issues/{head}/comments",
            fake_forge::OWNER,
            fake_forge::REPO
        )]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_late_post_to_a_rotated_member_is_read_in_a_busy_repository() {
    let fake = FakeForge::start().await;
    let (first, head) = rotated_with_a_late_post(&fake).await;
    busy(&fake, 1000);
    let before = fake.requests().await.len();
    let (c, _dir) = fresh(&fake);
    assert_eq!(
        c.resume("w", "s").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    let lists = downloads(&fake, before).await;
    assert!(
        !lists
            .iter()
            .any(|l| l.ends_with(WIDE) || l.contains(&format!("{WIDE}?"))),
        "{lists:?}"
    );
    // The head whole, and the rotated member through its own list since the head's creation.
    assert!(
        lists
            .iter()
            .any(|l| l.ends_with(&format!("/issues/{head}/comments"))),
        "{lists:?}"
    );
    assert!(
        lists
            .iter()
            .any(|l| l.contains(&format!("/issues/{first}/comments?since="))),
        "{lists:?}"
    );
}

/// Two rotations (#1 to #2 to the head), then a late post to #1 (`w`/`s`: subtask_1_complete)
/// and to #2 (`w`/`t`: subtask_2_complete) by machines whose cached issue numbers were still
/// fresh. Returns the head.
async fn rotated_twice_with_late_posts(fake: &FakeForge) -> u64 {
    let first = session(fake);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (on_first, on_second) = (bot(fake, a.path()), bot(fake, b.path()));
    on_first.save(cp("clone_complete")).await.posted().unwrap();
    let rotate = || async {
        bot(fake, tempfile::tempdir().unwrap().path())
            .rotate()
            .await
            .unwrap()
            .to
            .unwrap()
    };
    let second = rotate().await;
    let t = |phase: &str| Record::checkpoint("w", "t", phase, json!({"phase": phase})).unwrap();
    on_second.save(t("clone_complete")).await.posted().unwrap();
    let head = rotate().await;
    fake.age(3600);
    on_first
        .save(cp("subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    on_second
        .save(t("subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    for (member, phase) in [
        (first, "subtask_1_complete"),
        (second, "subtask_2_complete"),
    ] {
        assert!(
            fake.comments_on(member)
                .iter()
                .any(|c| c.body.contains(phase)),
            "the late post is on #{member}"
        );
    }
    head
}

/// Two rotations, then a late post to each rotated member (#1 and #2) by machines whose cached
/// issue numbers were still fresh, and nobody else writing: one repository-wide list holds both
/// late posts, one request where the members' own lists are two.
#[tokio::test(flavor = "multi_thread")]
async fn late_posts_to_two_rotated_members_are_read_in_a_quiet_repository() {
    let fake = FakeForge::start().await;
    let head = rotated_twice_with_late_posts(&fake).await;
    let before = fake.requests().await.len();
    let (c, _dir) = fresh(&fake);
    assert_eq!(
        c.resume("w", "s").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    let lists = downloads(&fake, before).await;
    assert_eq!(lists.len(), 2, "{lists:?}");
    assert!(
        lists
            .iter()
            .any(|l| l.ends_with(&format!("/issues/{head}/comments"))),
        "{lists:?}"
    );
    assert!(
        lists.iter().any(|l| l.contains(&format!("{WIDE}?since="))),
        "{lists:?}"
    );
    // The other late post, read cold too (a second machine).
    let (c, _dir) = fresh(&fake);
    assert_eq!(
        c.resume("w", "t").await.unwrap().resume.phase,
        "subtask_2_complete"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_comment_older_than_its_issue_is_read_in_a_busy_repository() {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    bot(&fake, tempfile::tempdir().unwrap().path())
        .save(cp("clone_complete"))
        .await
        .posted()
        .unwrap();
    // An owner may post with `updated_at` set (§3.11): the newest record, by comment id, says
    // it was made an hour before its issue, so no `since` near the issue's creation finds it.
    let body = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&cp("subtask_9_complete"))
        .unwrap();
    {
        let mut s = fake.state();
        let created = s.issue_mut(issue).map(|row| row.created).unwrap();
        let id = s.next_comment_id;
        s.next_comment_id += 1;
        s.comments.push(fake_forge::CommentRow {
            id,
            issue,
            poster: 7,
            body,
            created: created - 3600,
            updated: created - 3600,
        });
        if let Some(row) = s.issue_mut(issue) {
            row.comments += 1;
        }
    }
    busy(&fake, 1000);
    let (c, _dir) = fresh(&fake);
    assert_eq!(
        c.resume("w", "s").await.unwrap().resume.phase,
        "subtask_9_complete"
    );
    assert_eq!(phases(&c).await, ["clone_complete", "subtask_9_complete"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_s_own_list_cut_short_is_an_error_never_a_partial_answer() {
    let fake = FakeForge::start().await;
    let (first, _) = rotated_with_a_late_post(&fake).await;
    busy(&fake, 1000);
    // A proxy cuts the rotated member's list short: none of the comments it counts.
    Mock::given(method("GET"))
        .and(path_regex(format!(
            r"^/api/v1/repos/[^/]+/[^/]+/issues/{first}/comments$"
        )))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("[]", "application/json;charset=utf-8")
                .insert_header("X-Total-Count", "2"),
        )
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let (c, _dir) = fresh(&fake);
    let err = match c.resume("w", "s").await {
        Ok(got) => panic!("answered from part of the thread: {:?}", got.resume.phase),
        Err(e) => e,
    };
    assert_eq!(err.category(), forgestate::Category::Config, "{err}");
    assert!(err.to_string().contains("X-Total-Count"), "{err}");
}

/// At an empty cache, `/settings/api` (the page size) is asked beside the issue search, not
/// before it; once answered it is kept with the issue number, so a later process that must
/// discover the session issue again asks it nothing.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_size_is_asked_beside_the_issue_search_and_then_kept() {
    let fake = FakeForge::start().await;
    session(&fake);
    bot(&fake, tempfile::tempdir().unwrap().path())
        .save(cp("clone_complete"))
        .await
        .posted()
        .unwrap();
    let slow = std::time::Duration::from_millis(1500);
    fake.state().path_delays.extend([
        ("/settings/api".to_string(), slow),
        ("/issues".to_string(), slow),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let c = || {
        client(&fake, BOT_TOKEN, dir.path())
            .recheck_after(std::time::Duration::ZERO)
            .build()
            .unwrap()
    };
    assert_eq!(
        c().resume("w", "s").await.unwrap().resume.phase,
        "clone_complete"
    );
    let took = start.elapsed();
    // The discovery's search and the cold read's own (1.5 s each) are the floor; the page
    // size asked first would be 1.5 s more.
    assert!(took < std::time::Duration::from_millis(4300), "{took:?}");
    fake.state().path_delays.clear();

    let settings = |rs: &[wiremock::Request]| {
        rs.iter()
            .filter(|r| r.url.path().ends_with("/settings/api"))
            .count()
    };
    // Another process rotates, so this machine's cached issue is closed: it discovers again.
    bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let before = fake.requests().await.len();
    assert_eq!(
        c().resume("w", "s").await.unwrap().resume.phase,
        "clone_complete"
    );
    let asked = fake.requests().await.split_off(before);
    assert!(
        asked.iter().any(|r| r.url.path().ends_with("/issues")),
        "it discovered again"
    );
    assert_eq!(settings(&asked), 0, "the page size came from the cache");
    // A machine without the cache asks (else the count above shows nothing).
    let before = fake.requests().await.len();
    let (other, _d) = fresh(&fake);
    other.resume("w", "s").await.unwrap();
    assert_eq!(settings(&fake.requests().await.split_off(before)), 1);
}

/// The same, through a proxy that cuts the repository-wide list short: the strays are known, so
/// they are read through their own lists, and the answer is complete.
#[tokio::test(flavor = "multi_thread")]
async fn a_repository_wide_list_cut_short_is_made_up_by_the_strays_own_lists() {
    let fake = FakeForge::start().await;
    rotated_twice_with_late_posts(&fake).await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/api/v1/repos/[^/]+/[^/]+/issues/comments$"))
        .and(wiremock::matchers::query_param_is_missing("page"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("[]", "application/json;charset=utf-8")
                .insert_header("X-Total-Count", "3"),
        )
        .with_priority(1)
        .mount(&fake.server)
        .await;
    for (session, phase) in [("s", "subtask_1_complete"), ("t", "subtask_2_complete")] {
        let (c, _dir) = fresh(&fake);
        let got = c.resume("w", session).await.unwrap();
        assert_eq!(got.resume.phase, phase);
        assert!(got.complete, "{got:?}");
    }
}

/// A cold read on a machine whose issue-number cache names the head (it posted, or its read
/// cache is being rebuilt) asks the head's lists together with the check that the cached issue
/// is still the head: one round trip, not two (issue #44). When the cached issue is no longer
/// the head, what was asked of it is dropped and the head is read.
#[tokio::test(flavor = "multi_thread")]
async fn a_cached_head_s_lists_are_asked_with_its_recheck() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = || {
        client(&fake, BOT_TOKEN, dir.path())
            .recheck_after(std::time::Duration::ZERO)
            .build()
            .unwrap()
    };
    c().save(cp("clone_complete")).await.posted().unwrap();
    // The recheck of the cached issue is answered late: a read that waited for it before
    // asking the head's list would ask the list only after that answer.
    let slow = std::time::Duration::from_millis(1500);
    fake.state()
        .path_delays
        .push((format!("/issues/{n}"), slow));
    let reader = c();
    reader.refresh();
    let before = fake.state().arrivals.len();
    assert_eq!(
        reader.resume("w", "s").await.unwrap().resume.phase,
        "clone_complete"
    );
    let asked = fake.state().arrivals.split_off(before);
    fake.state().path_delays.clear();
    let get = |suffix: &str| {
        asked
            .iter()
            .filter(|a| a.method == "GET" && a.path.ends_with(suffix))
            .cloned()
            .collect::<Vec<_>>()
    };
    let rechecks = get(&format!("/issues/{n}"));
    let lists = get(&format!("/issues/{n}/comments"));
    assert_eq!(
        rechecks.len(),
        1,
        "one recheck of the cached issue: {asked:?}"
    );
    assert!(!lists.is_empty(), "the head's list was read: {asked:?}");
    // Structure, not speed: the list reached the forge while the recheck's answer was still
    // held back, so the two were asked together (one round trip, not two dependent ones).
    assert!(
        lists.iter().any(|l| l.at < rechecks[0].answered),
        "the head's list was asked only after the recheck answered: {asked:?}"
    );

    // Another machine rotates and saves on the new head: the cached issue is closed.
    let other = tempfile::tempdir().unwrap();
    bot(&fake, other.path()).rotate().await.unwrap();
    bot(&fake, other.path())
        .save(cp("after_rotation"))
        .await
        .posted()
        .unwrap();
    let reader = c();
    reader.refresh();
    assert_eq!(
        reader.resume("w", "s").await.unwrap().resume.phase,
        "after_rotation",
        "the new head is read, not the cached one"
    );
    assert_eq!(phases(&reader).await, ["clone_complete", "after_rotation"]);
}

/// The thread's own author's record on an issue that is not a member (another title, no label),
/// which the repository-wide list holds beside the rotated members' late posts when the read
/// could not learn beforehand which issues are members (the issue search failed): the list's
/// members-only rule leaves it out, as it does for the comments the read cache takes whole as
/// they are decoded (`forge/handoff.rs`).
#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_record_on_another_issue_is_never_read_through_the_wide_list() {
    let fake = FakeForge::start().await;
    rotated_twice_with_late_posts(&fake).await;
    let other = fake.add_issue("Release 2.0 discussion", &[], false);
    let elsewhere = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&cp("posted_elsewhere"))
        .unwrap();
    fake.add_comment(other, "ca-bot", &elsewhere);
    // The search for the issues updated since the head was created fails: no verdict is known
    // before the repository-wide list is read.
    Mock::given(method("GET"))
        .and(path_regex(r"^/api/v1/repos/[^/]+/[^/]+/issues$"))
        .and(|r: &wiremock::Request| r.url.query_pairs().any(|(k, _)| k == "since"))
        .respond_with(ResponseTemplate::new(400))
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let before = fake.requests().await.len();
    let (c, _dir) = fresh(&fake);
    assert_eq!(
        c.resume("w", "s").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    let lists = downloads(&fake, before).await;
    assert!(
        lists.iter().any(|l| l.contains(&format!("{WIDE}?since="))),
        "read through the repository-wide list: {lists:?}"
    );
    assert_eq!(
        phases(&c).await,
        [
            "clone_complete",
            "clone_complete",
            "subtask_1_complete",
            "subtask_2_complete"
        ]
    );
}
