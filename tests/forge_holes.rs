//! Forge-side holes an attacker found: list walks that never end, owner/repo names that are
//! not path segments, a post repeated because the forge stored its body with CRLF line ends, and
//! empty title/label settings.

mod common;
mod fake_forge;

use std::time::{Duration, Instant};

use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, client, session};
use forgestate::client::Outcome;
use forgestate::format::Record;
use serde_json::json;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s", phase, json!({"n": 1})).unwrap()
}

/// An issue as the list endpoint shows it, with this id and number.
fn issue(fake: &FakeForge, n: u64) -> serde_json::Value {
    json!({"id": n, "url": format!("{}/api/v1/repos/{OWNER}/{REPO}/issues/{n}", fake.uri()),
        "html_url": format!("{}/{OWNER}/{REPO}/issues/{n}", fake.uri()), "number": n,
        "user": {"id": 7, "login": "ca-bot"}, "title": "other", "body": "", "labels": [],
        "milestone": null, "assignee": null, "assignees": null, "state": "open", "comments": 0,
        "created_at": "2026-11-30T00:00:00Z", "updated_at": "2026-11-30T00:00:00Z",
        "closed_at": null, "due_date": null, "pull_request": null, "repository": null})
}

/// How the lying issue list promises more.
#[derive(Clone, Copy)]
enum Endless {
    /// Every page links to page 2 as the next one.
    StuckLink,
    /// The same page whatever `page` asks, always linking to the one after.
    SamePage,
    /// A fresh page each time, linking to the one after, forever.
    Fresh,
}

/// Makes the open-issue list of the fake promise another page forever, as `how` says.
async fn endless_issue_list(fake: &FakeForge, how: Endless) {
    let base = fake.uri();
    let one = issue(fake, 9);
    let fresh = move |req: &Request| {
        let page: u64 = req
            .url
            .query_pairs()
            .find(|(k, _)| k == "page")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(1);
        let (body, next) = match how {
            Endless::StuckLink => (vec![one.clone()], 2),
            Endless::SamePage => (vec![one.clone()], page + 1),
            Endless::Fresh => {
                let mut i = one.clone();
                i["id"] = json!(1000 + page);
                i["number"] = json!(1000 + page);
                (vec![i], page + 1)
            }
        };
        let link = format!(
            "<{base}/api/v1/repos/{OWNER}/{REPO}/issues?limit=50&page={next}&state=open&type=issues>; rel=\"next\""
        );
        ResponseTemplate::new(200)
            .set_body_json(body)
            .insert_header("Link", link.as_str())
    };
    Mock::given(method("GET"))
        .and(path_regex(format!("^/api/v1/repos/{OWNER}/{REPO}/issues$")))
        .respond_with(fresh)
        .with_priority(1)
        .mount(&fake.server)
        .await;
}

/// A checkpoint against a forge whose issue list never ends comes back soon, with the record
/// spooled (not lost) and a message that says what is wrong.
async fn an_endless_list_spools(how: Endless, most_requests: usize) {
    let fake = FakeForge::start().await;
    fake.add_label(forgestate::defaults::LABEL);
    endless_issue_list(&fake, how).await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .outbox(dir.path().join("outbox"))
        .build()
        .unwrap();
    let started = Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(30), c.save(cp("p")))
        .await
        .expect("the walk ends");
    assert!(started.elapsed() < Duration::from_secs(20));
    match outcome {
        Outcome::Spooled { path, cause, .. } => {
            assert!(path.exists());
            assert!(cause.to_string().contains("never ends"), "{cause}");
        }
        other => panic!("not spooled: {other:?}"),
    }
    let lists = fake
        .requests()
        .await
        .iter()
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/issues"))
        .count();
    assert!(lists <= most_requests, "{lists} list requests");
    assert!(fake.state().comments.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_next_link_that_does_not_advance_spools_the_record() {
    an_endless_list_spools(Endless::StuckLink, 4).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_that_repeats_spools_the_record() {
    an_endless_list_spools(Endless::SamePage, 4).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_list_past_the_page_cap_spools_the_record() {
    an_endless_list_spools(Endless::Fresh, 2 * 1000 + 2).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_issue_is_still_found_on_a_later_page() {
    let fake = FakeForge::start().await;
    fake.state().max_response_items = 2;
    for n in 0..5 {
        fake.add_issue(&format!("other {n}"), &[], false);
    }
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    c.save(cp("p")).await.posted().unwrap();
    assert_eq!(fake.comments_on(n).len(), 1);
}
