//! The Forgejo backend's failure cases against the fake: missing issue, auth, scopes, a moved
//! repository, a closed or deleted cached issue, server errors, edits and `since`.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, READER_TOKEN, client};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::Record;
use forgestate::scan::Filter;
use forgestate::store::Thread;
use forgestate::{Category, Error};
use serde_json::json;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

use forgestate::defaults::LABEL;

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s", phase, json!({})).unwrap()
}

fn category(e: impl Into<Error>) -> (Category, String) {
    let e = e.into();
    (e.category(), e.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn no_session_issue_is_an_error_naming_init_for_reads_and_for_writes_without_auto_init() {
    let fake = FakeForge::start().await;
    fake.add_label(LABEL);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .auto_init(false)
        .build()
        .unwrap();
    let (cat, msg) = category(c.resume("w", "s").await.unwrap_err());
    assert_eq!(cat, Category::Config);
    assert!(
        msg.contains("forgestate init") && msg.contains(TITLE) && msg.contains(LABEL),
        "{msg}"
    );
    let (_, msg) = category(c.post(cp("p")).await.unwrap_err());
    assert!(msg.contains("forgestate init"), "{msg}");
    assert!(
        fake.state().issues.is_empty(),
        "nothing created without auto_init"
    );

    let auto = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    auto.post(cp("p"))
        .await
        .expect("auto_init (the default) creates the issue on first post");
    assert_eq!(fake.open_issues_titled(TITLE).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_token_and_missing_scope_say_what_to_fix() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let unknown = client(
        &fake,
        "0000000000000000000000000000000000000000",
        dir.path(),
    )
    .build()
    .unwrap();
    let (cat, msg) = category(unknown.post(cp("p")).await.unwrap_err());
    assert_eq!(cat, Category::Config);
    assert!(
        msg.contains("401") && msg.contains("FORGESTATE_TOKEN"),
        "{msg}"
    );
    assert!(
        !msg.contains("0000000000000000000000000000000000000000"),
        "{msg}"
    );

    let reader = client(&fake, READER_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    let (cat, msg) = category(reader.post(cp("p")).await.unwrap_err());
    assert_eq!(cat, Category::Config);
    assert!(msg.contains("403") && msg.contains("write:issue"), "{msg}");
    let (_, msg) = category(reader.resume("w", "s").await.unwrap_err());
    assert!(msg.contains("read:user"), "trust needs GET /user: {msg}");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_repo_is_not_found_and_a_moved_repo_is_not_followed() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let c = forgestate::Client::forge(fake.uri(), "nobody", "r")
        .token(secrecy::SecretString::from(BOT_TOKEN))
        .cache_dir(dir.path().join("cache"))
        .retry_budget(fake_forge::RETRY_BUDGET)
        .build()
        .unwrap();
    let (cat, msg) = category(c.post(cp("p")).await.unwrap_err());
    assert_eq!(cat, Category::Config);
    assert!(
        msg.contains("404") && msg.contains("owner and repo"),
        "{msg}"
    );

    Mock::given(method("POST"))
        .and(path_regex("/comments$"))
        .respond_with(
            ResponseTemplate::new(301)
                .insert_header("Location", "/api/v1/repos/new/name/issues/1/comments"),
        )
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let label = fake.add_label(LABEL);
    fake.add_issue(TITLE, &[label], false);
    let bot = client(&fake, BOT_TOKEN, tempfile::tempdir().unwrap().path())
        .build()
        .unwrap();
    let (cat, msg) = category(bot.post(cp("p")).await.unwrap_err());
    assert_eq!(cat, Category::Config);
    assert!(msg.contains("301") && msg.contains("renamed"), "{msg}");
    let gets_after = fake
        .requests()
        .await
        .iter()
        .filter(|r| r.url.path().contains("/new/name/"))
        .count();
    assert_eq!(gets_after, 0, "the redirect was not followed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_cached_issue_is_rediscovered_after_recheck() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let first = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let rechecking = || {
        client(&fake, BOT_TOKEN, dir.path())
            .recheck_after(std::time::Duration::ZERO)
            .build()
            .unwrap()
    };
    rechecking().post(cp("a")).await.unwrap();
    fake.state().issues.iter_mut().for_each(|i| i.closed = true);
    let second = fake.add_issue(TITLE, &[label], false);
    rechecking().post(cp("b")).await.unwrap();
    assert_eq!(fake.comments_on(first).len(), 1);
    assert_eq!(fake.comments_on(second).len(), 1, "moved to the open issue");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_cached_issue_is_found_again_on_404() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let first = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    client(&fake, BOT_TOKEN, dir.path())
        .build()
        .unwrap()
        .post(cp("a"))
        .await
        .unwrap();
    fake.state().issues.retain(|i| i.number != first);
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    c.post(cp("b")).await.unwrap();
    let open = fake.open_issues_titled(TITLE);
    assert_eq!(open.len(), 1);
    assert_eq!(
        fake.comments_on(open[0]).len(),
        1,
        "re-created by auto_init and posted there"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_are_retried_then_are_temporary_failures_not_io() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let n = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    c.post(cp("a")).await.unwrap();
    fake.inject("/comments", fake_forge::Fault::Status(502));
    c.post(cp("b")).await.expect("one 502 is retried");
    assert_eq!(
        fake.comments_on(n).len(),
        2,
        "a refused attempt is not committed; the retry is"
    );

    fake.state().down = true;
    let (cat, msg) = category(c.post(cp("c")).await.unwrap_err());
    assert_eq!(
        cat,
        Category::TempFail,
        "a forge that is down is temporary (75), not local IO (74)"
    );
    assert!(msg.contains("503"), "{msg}");
    fake.state().down = false;

    let before = fake.requests().await.len();
    fake.inject("/comments", fake_forge::Fault::Status(422));
    let (cat, _) = category(c.post(cp("d")).await.unwrap_err());
    assert_eq!(cat, Category::Data, "422 is the request's fault");
    assert_eq!(
        fake.requests().await.len() - before,
        1,
        "4xx is never retried"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_is_honoured() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .retry_budget(std::time::Duration::from_secs(3))
        .build()
        .unwrap();
    c.post(cp("a")).await.unwrap();
    fake.inject("/comments", fake_forge::Fault::StatusRetryAfter(429, 1));
    let start = std::time::Instant::now();
    c.post(cp("b")).await.unwrap();
    assert!(
        start.elapsed() >= std::time::Duration::from_millis(950),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_are_marked_and_since_is_inclusive() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let n = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    let posted = c.post(cp("a")).await.unwrap();
    {
        let mut s = fake.state();
        let row = s
            .comments
            .iter_mut()
            .find(|r| r.id == posted.comment_id)
            .unwrap();
        row.updated += 60;
        row.body = row.body.replace("Phase: a", "Phase: a-edited");
    }
    let latest = c.latest(&Filter::default()).await.unwrap().record;
    let latest = latest.unwrap();
    assert!(latest.comment.edited);
    assert_eq!(latest.record.phase(), Some("a-edited"));

    let updated = fake.comments_on(n)[0].updated;
    let at = chrono::DateTime::from_timestamp(updated, 0).unwrap();
    assert_eq!(
        c.thread_raw().list(Some(at)).await.unwrap().comments.len(),
        1,
        "since is inclusive"
    );
    let after = chrono::DateTime::from_timestamp(updated + 1, 0).unwrap();
    assert_eq!(
        c.thread_raw()
            .list(Some(after))
            .await
            .unwrap()
            .comments
            .len(),
        0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_login_redirect_names_a_proxy_not_a_renamed_repository() {
    use crate::common::cli::{Bin, stderr, words};
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    fake.add_issue(TITLE, &[label], false);
    // An auth proxy in front of the forge sends the API's requests to its login page.
    Mock::given(method("GET"))
        .and(path_regex("/api/v1/user$"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "Location",
            "https://sso.example.com/login?next=%2Fapi%2Fv1%2Fuser",
        ))
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path())
        .forge(&fake.uri(), fake_forge::OWNER, fake_forge::REPO, BOT_TOKEN)
        .run(&words("resume --agent w --session s"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(err.contains("302") && err.contains("proxy"), "{err}");
    assert!(!err.contains("renamed"), "/user is no repository: {err}");
}
