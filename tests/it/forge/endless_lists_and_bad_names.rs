//! The forge answering oddly or being named oddly: list walks that never end, owner/repo names
//! that are not path segments, a post repeated because the forge stored its body with CRLF line
//! ends, and empty title/label settings.

use crate::{common, fake_forge};
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

/// Runs the binary against `url` with `owner`/`repo` in the environment.
fn run_as(url: &str, owner: &str, repo: &str, line: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    common::cli::Bin::new(dir.path())
        .forge(url, owner, repo, BOT_TOKEN)
        .line(line)
}

#[tokio::test(flavor = "multi_thread")]
async fn owner_and_repo_that_are_not_names_exit_78_and_send_nothing() {
    let fake = FakeForge::start().await;
    let long = "a".repeat(101);
    for (owner, repo, setting) in [
        ("..", REPO, "FORGESTATE_OWNER"),
        (".", REPO, "FORGESTATE_OWNER"),
        ("o?x=1#", REPO, "FORGESTATE_OWNER"),
        ("o%2e%2e", REPO, "FORGESTATE_OWNER"),
        ("ünïcode", REPO, "FORGESTATE_OWNER"),
        (OWNER, "..", "FORGESTATE_REPO"),
        (OWNER, "r#frag", "FORGESTATE_REPO"),
        (OWNER, long.as_str(), "FORGESTATE_REPO"),
    ] {
        for line in ["init", "checkpoint --agent w --session s --phase p"] {
            let out = run_as(&fake.uri(), owner, repo, line);
            let err = common::cli::stderr(&out);
            assert_eq!(out.status.code(), Some(78), "{owner}/{repo} {line}: {err}");
            assert!(err.contains(setting), "{owner}/{repo}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
        }
    }
    assert!(
        fake.requests().await.is_empty(),
        "nothing reaches the forge"
    );
    // A name with every allowed kind of character is sent as it is.
    run_as(&fake.uri(), "my-org.x_1", "repo.name-2_b", "init");
    let paths: Vec<String> = fake
        .requests()
        .await
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("/api/v1/repos/my-org.x_1/repo.name-2_b/")),
        "{paths:?}"
    );
}

#[test]
fn empty_title_or_label_exit_78_naming_the_key() {
    for (config, key) in [
        ("[forge]\nlabel = \"\"\n", "[forge] label"),
        ("[forge]\nlabel = \"  \"\n", "[forge] label"),
        ("[forge]\ntitle = \"\"\n", "[forge] title"),
        ("[forge]\ntitle = \"\\t\"\n", "[forge] title"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.toml"), config).unwrap();
        // A forge that refuses connections: a value that slipped through fails otherwise.
        let out = common::cli::Bin::new(dir.path())
            .forge("http://127.0.0.1:9", OWNER, REPO, BOT_TOKEN)
            .line("--config c.toml init");
        let err = common::cli::stderr(&out);
        assert_eq!(out.status.code(), Some(78), "{config}: {err}");
        assert!(
            err.contains(key) && err.contains("empty"),
            "{config}: {err}"
        );
    }
}

#[test]
fn the_library_refuses_an_empty_title_or_label_too() {
    let dir = tempfile::tempdir().unwrap();
    for (title, label, key) in [("", "L", "title"), ("T", " ", "label")] {
        let err = forgestate::Client::forge("http://127.0.0.1:9", OWNER, REPO)
            .token(secrecy::SecretString::from(BOT_TOKEN))
            .cache_dir(dir.path().join("cache"))
            .issue(title, label)
            .build()
            .err()
            .expect("refused");
        assert_eq!(err.category(), forgestate::Category::Config, "{err}");
        assert!(err.to_string().contains(key), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_post_stored_with_crlf_whose_answer_is_lost_is_posted_once() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    fake.state().crlf = true;
    let dir = tempfile::tempdir().unwrap();
    let proxy = fake_forge::dropper::Dropper::start(fake.addr(), 1, "POST ").await;
    let c = fake_forge::client_at(&proxy.uri(), BOT_TOKEN, dir.path())
        .outbox(dir.path().join("outbox"))
        .build()
        .unwrap();
    let record = cp("p");
    let id = record.id.clone().unwrap();
    let outcome = c.save(record).await;
    assert_eq!(proxy.drops.load(std::sync::atomic::Ordering::SeqCst), 0);
    let stored = fake.comments_on(n);
    assert!(
        stored.iter().all(|c| c.body.contains("\r\n")),
        "the fake stores CRLF"
    );
    let copies = stored.iter().filter(|c| c.body.contains(&id)).count();
    assert_eq!(copies, 1, "posted once, not twice");
    assert!(matches!(outcome, Outcome::Posted(_)), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spooled_record_the_forge_holds_with_crlf_is_not_flushed_again() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .outbox(dir.path().join("outbox"))
        .build()
        .unwrap();
    fake.state().down = true;
    let Outcome::Spooled { path, .. } = c.save(cp("p")).await else {
        panic!("not spooled");
    };
    // The post was committed after all, and the forge keeps it with CRLF line ends.
    let body = std::fs::read_to_string(&path).unwrap();
    fake.add_comment(n, "ca-bot", &body.replace('\n', "\r\n"));
    fake.state().down = false;
    let report = c.flush().await;
    assert_eq!(report.already_posted, 1, "{report:?}");
    assert_eq!(fake.comments_on(n).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_posted_to_the_closed_predecessor_after_a_successor_opened_is_resumed() {
    let fake = FakeForge::start().await;
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let run = |dir: &std::path::Path, line: &str| {
        let out = common::cli::Bin::new(dir)
            .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
            .line(line);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{line}: {}",
            common::cli::stderr(&out)
        );
        common::cli::stdout(&out)
    };
    run(a.path(), "checkpoint --agent w --session s --phase p1");
    let first = fake.open_issues_titled(forgestate::defaults::TITLE)[0];
    {
        let mut s = fake.state();
        let now = s.now();
        let issue = s.issue_mut(first).unwrap();
        (issue.closed, issue.closed_at) = (true, Some(now)); // a human closes it
    }
    run(b.path(), "checkpoint --agent w --session s --phase p2"); // machine B opens #2
    let second = fake.open_issues_titled(forgestate::defaults::TITLE)[0];
    assert_ne!(first, second);
    fake.state().clock_offset += 2; // forge times are whole seconds
    run(a.path(), "checkpoint --agent w --session s --phase p3"); // machine A's cache is fresh
    assert!(
        fake.comments_on(first)
            .iter()
            .any(|c| c.body.contains("Phase: p3"))
    );
    for dir in [b.path(), a.path()] {
        let out = run(dir, "resume --agent w --session s --json");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(out.contains("\"p3\""), "{doc}");
        assert!(!out.contains("\"p2\""), "{doc}");
    }
}
