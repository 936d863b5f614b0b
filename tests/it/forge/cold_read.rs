//! A cold read (no read cache yet) against the fake Forgejo: one download of the thread, and
//! never an answer from part of one. Both comment lists send every match in one answer, with
//! `X-Total-Count` equal to what they sent (ENDPOINTS.md §3.9, §3.10); a list holding fewer
//! elements than that was cut short on the way, and a read that believed it would answer a stale
//! checkpoint, or a fresh start, for a session that has moved on.

use crate::{common, fake_forge};
use common::cli::{Bin, stderr};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, client, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use serde_json::json;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

/// The repository-wide comment list (§3.10), not one issue's.
const REPO_WIDE: &str = r"^/api/v1/repos/[^/]+/[^/]+/issues/comments$";
/// One issue's comment list (§3.9).
const ONE_ISSUE: &str = r"^/api/v1/repos/[^/]+/[^/]+/issues/\d+/comments$";

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s", phase, json!({"phase": phase})).unwrap()
}

async fn saved(fake: &FakeForge, phases: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let c = client(fake, BOT_TOKEN, dir.path()).build().unwrap();
    for phase in phases {
        c.save(cp(phase)).await.posted().unwrap();
    }
}

fn cold(fake: &FakeForge, dir: &std::path::Path) -> Client<AnyThread> {
    client(fake, BOT_TOKEN, dir).build().unwrap()
}

/// An answer of `items` that claims `total` comments in its `X-Total-Count`.
fn cut_short(items: &str, total: usize) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_raw(items.to_string(), "application/json;charset=utf-8")
        .insert_header("X-Total-Count", total.to_string().as_str())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cold_read_downloads_the_thread_once() {
    let fake = FakeForge::start().await;
    session(&fake);
    saved(&fake, &["clone_complete", "subtask_1_complete"]).await;
    let before = fake.requests().await.len();
    let dir = tempfile::tempdir().unwrap();
    let got = cold(&fake, dir.path()).resume("w", "s").await.unwrap();
    assert_eq!(got.resume.phase, "subtask_1_complete");
    let lists: Vec<String> = fake
        .requests()
        .await
        .into_iter()
        .skip(before)
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        // Page 1 of one comment sizes the repository-wide list; it downloads nothing.
        .filter(|r| !r.url.query().is_some_and(|q| q.contains("limit=1")))
        .map(|r| r.url.path().to_string())
        .collect();
    // No other member was updated since the head was created, so the head's own list is the
    // thread, and one download: asking for the repository-wide list too would download every
    // record twice.
    assert_eq!(lists.len(), 1, "{lists:?}");
    assert!(lists[0].ends_with("/issues/1/comments"), "{lists:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_wide_list_cut_short_is_read_through_the_head_s_own_list() {
    let fake = FakeForge::start().await;
    session(&fake);
    saved(&fake, &["clone_complete", "subtask_1_complete"]).await;
    // A proxy that cuts the repository-wide list short: nothing of the two comments it counts.
    Mock::given(method("GET"))
        .and(path_regex(REPO_WIDE))
        .respond_with(cut_short("[]", 2))
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = cold(&fake, dir.path());
    assert_eq!(
        c.resume("w", "s").await.unwrap().resume.phase,
        "subtask_1_complete",
        "a cold read"
    );
    // And a warm one, after another record.
    saved(&fake, &["subtask_2_complete"]).await;
    assert_eq!(
        cold(&fake, dir.path())
            .resume("w", "s")
            .await
            .unwrap()
            .resume
            .phase,
        "subtask_2_complete",
        "a warm read"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_list_cut_short_is_an_error_never_a_fresh_start() {
    let fake = FakeForge::start().await;
    session(&fake);
    saved(&fake, &["clone_complete"]).await;
    // A server without the repository-wide list, and the head's list cut short.
    Mock::given(method("GET"))
        .and(path_regex(REPO_WIDE))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_raw(r#"{"message":"Not Found"}"#, "application/json"),
        )
        .with_priority(1)
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(ONE_ISSUE))
        .respond_with(cut_short("[]", 1))
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let err = match cold(&fake, dir.path()).resume("w", "s").await {
        Ok(got) => panic!("answered from part of the thread: {:?}", got.resume.phase),
        Err(e) => e,
    };
    // A setup problem (exit 78), not a forge that is down: no outbox answers for it.
    assert_eq!(err.category(), forgestate::Category::Config, "{err}");
    let err = err.to_string();
    assert!(
        err.contains("sent 0 of the 1 comments") && err.contains("X-Total-Count"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_with_its_outbox_refuses_a_thread_cut_short_too() {
    let fake = FakeForge::start().await;
    session(&fake);
    saved(&fake, &["clone_complete"]).await;
    for (path, reply) in [
        (REPO_WIDE, cut_short("[]", 1)),
        (ONE_ISSUE, cut_short("[]", 1)),
    ] {
        Mock::given(method("GET"))
            .and(path_regex(path))
            .respond_with(reply)
            .with_priority(1)
            .mount(&fake.server)
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .line("resume --agent w --session s --json");
    // Not a forge that is down (75, where this machine's outbox would answer alone).
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(stderr(&out).contains("X-Total-Count"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_comment_older_than_its_issue_is_still_read_cold() {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    saved(&fake, &["clone_complete"]).await;
    // An owner may post with `updated_at` set (§3.11): the newest record, by comment id, says
    // it was updated an hour before the issue was created, so no `since` near the issue's
    // creation finds it. The issue's comment count does.
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
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        cold(&fake, dir.path())
            .resume("w", "s")
            .await
            .unwrap()
            .resume
            .phase,
        "subtask_9_complete"
    );
}

/// A read through the head's own list alone may miss records left on earlier issues of the
/// thread. It says so where programs look: a warning in the answer document and
/// `complete: false`, on the library, `--json` and MCP, for a list cut short and for a server
/// without the list. (A cold read does not need that list: it finds the members that got
/// posts since the head was created from the issue list, so it stays complete.)
#[tokio::test(flavor = "multi_thread")]
async fn a_read_through_the_head_s_own_list_says_so_in_the_answer() {
    for answer in [cut_short("[]", 2), ResponseTemplate::new(404)] {
        let fake = FakeForge::start().await;
        session(&fake);
        saved(&fake, &["clone_complete"]).await;
        Mock::given(method("GET"))
            .and(path_regex(REPO_WIDE))
            .respond_with(answer)
            .with_priority(1)
            .mount(&fake.server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let got = cold(&fake, dir.path()).resume("w", "s").await.unwrap();
        assert_eq!(got.resume.phase, "clone_complete");
        assert!(got.complete, "a cold read: {got:?}");
        // The next read is warm: one repository-wide list since the last.
        saved(&fake, &["subtask_1_complete"]).await;
        let got = cold(&fake, dir.path()).resume("w", "s").await.unwrap();
        assert_eq!(got.resume.phase, "subtask_1_complete");
        assert!(!got.complete, "{got:?}");
        assert!(
            got.warnings.iter().any(|w| w.contains("own list")),
            "{:?}",
            got.warnings
        );

        let bin = || Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
        // The binary's own read cache: its first read is cold, and complete.
        let out = bin().run(&common::cli::words("resume --agent w --session s --json"));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["complete"], true, "{doc:#}");
        for line in [
            "resume --agent w --session s --json",
            "latest --agent w --json",
            "list --json",
            "status --json",
            "history --session s --json",
        ] {
            let out = bin().run(&common::cli::words(line));
            assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(doc["complete"], false, "{line}: {doc:#}");
            let warned = doc["warnings"].as_array().unwrap();
            assert!(
                warned
                    .iter()
                    .any(|w| w.as_str().unwrap().contains("own list")),
                "{line}: {doc:#}"
            );
        }

        let (mcp, _err) = crate::mcp_client::connect(&bin(), "").await;
        let got =
            crate::mcp_client::call(&mcp, "resume", json!({"agent": "w", "session": "s"})).await;
        let doc = crate::mcp_client::ok(&got);
        assert_eq!(doc["complete"], false, "{doc:#}");
        assert_eq!(doc["warnings"].as_array().unwrap().len(), 1, "{doc:#}");
        mcp.cancel().await.unwrap();
    }
}

/// An answer of `items` with no `X-Total-Count` (a proxy or cache that strips headers).
fn headerless(items: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(items.to_string(), "application/json;charset=utf-8")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_list_shorter_than_its_issue_s_count_is_an_error_never_a_stale_answer() {
    // The newest comment dropped, then every comment, with no header to tell.
    for shown in [2, 0] {
        let fake = FakeForge::start().await;
        let n = session(&fake);
        saved(
            &fake,
            &["clone_complete", "subtask_1_complete", "subtask_2_complete"],
        )
        .await;
        let dir = tempfile::tempdir().unwrap();
        let warm = cold(&fake, dir.path());
        assert_eq!(
            warm.resume("w", "s").await.unwrap().resume.phase,
            "subtask_2_complete"
        );
        let items = {
            let s = fake.state();
            let items: Vec<String> = s
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .take(shown)
                .map(|c| fake_forge::views::comment_text(&s, c))
                .collect();
            format!("[{}]", items.join(","))
        };
        Mock::given(method("GET"))
            .and(path_regex(ONE_ISSUE))
            .respond_with(headerless(&items))
            .with_priority(1)
            .mount(&fake.server)
            .await;
        let fresh = tempfile::tempdir().unwrap();
        for (what, got) in [
            ("cold", cold(&fake, fresh.path()).resume("w", "s").await),
            ("refreshed", {
                warm.refresh();
                warm.resume("w", "s").await
            }),
        ] {
            let err = match got {
                Ok(got) => panic!("{what} {shown}: answered from part of the thread: {got:?}"),
                Err(e) => e,
            };
            assert_eq!(
                err.category(),
                forgestate::Category::Config,
                "{what}: {err}"
            );
            assert!(
                err.to_string().contains("the issue counts 3"),
                "{what}: {err}"
            );
        }
        let out = Bin::new(fresh.path())
            .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
            .line("resume --agent w --session s --json");
        assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    }
}
