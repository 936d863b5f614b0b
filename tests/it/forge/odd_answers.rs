//! Forge HTTP hardening: an odd comment is one rejected comment (not an unreadable thread),
//! credentials in the forge url are refused, waits are announced, TLS failures are not retried,
//! and a url given with `/api/v1` works. Backend-level and through the real binary.

use crate::{common, fake_forge};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::cli::{Bin, stderr, stdout};
use common::paths_under;
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, client, client_at, session};
use forgestate::format::Record;
use forgestate::scan::Filter;
use forgestate::store::Thread;
use forgestate::{Category, Client, Error};
use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s", phase, json!({"n": 1})).unwrap()
}

fn category(e: impl Into<Error>) -> (Category, String) {
    let e = e.into();
    (e.category(), e.to_string())
}

/// A record body as the bot would post it.
fn body(phase: &str) -> String {
    forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&cp(phase))
        .unwrap()
}

/// Runs the binary against `url` with the bot's token, caching and spooling under `dir`.
fn forgestate(url: &str, dir: &Path, line: &str) -> Output {
    Bin::new(dir).forge(url, OWNER, REPO, BOT_TOKEN).line(line)
}

fn json_out(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(out), stderr(out)))
}

/// Adds one good record, then comments with a `null` body, a `null` user and an odd time,
/// then another good record. Returns the odd comments' ids.
fn odd_thread(fake: &FakeForge, n: u64) -> [u64; 3] {
    fake.add_comment(n, "ca-bot", &body("before"));
    let null_body = fake.add_odd_comment(n, "ca-bot", &body("x"), json!({"body": null}));
    let null_user = fake.add_odd_comment(n, "ca-bot", &body("y"), json!({"user": null}));
    let odd_time = fake.add_odd_comment(n, "ca-bot", &body("z"), json!({"created_at": 17}));
    fake.add_comment(n, "ca-bot", &body("after"));
    [null_body, null_user, odd_time]
}

#[tokio::test(flavor = "multi_thread")]
async fn an_odd_comment_is_one_rejected_comment_not_an_unreadable_thread() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let [null_body, null_user, odd_time] = odd_thread(&fake, n);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();

    let scan = c.list(&Filter::default(), None).await.expect("readable");
    assert!(!scan.offline);
    let phases: Vec<String> = scan
        .entries
        .iter()
        .map(|e| e.record.phase().unwrap_or_default().to_string())
        .collect();
    assert_eq!(phases, ["before", "after"]);
    let rejected: Vec<(Option<u64>, &str, &str)> = scan
        .rejected
        .iter()
        .map(|r| (r.comment.id, r.code.code(), r.reason.as_str()))
        .collect();
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    assert_eq!(rejected[0].0, Some(null_body));
    assert_eq!(rejected[1].0, Some(null_user));
    assert_eq!(rejected[2].0, Some(odd_time));
    assert!(rejected.iter().all(|r| r.1 == "unreadable"), "{rejected:?}");
    assert!(
        rejected[0].2.contains("`body` is null"),
        "{}",
        rejected[0].2
    );
    assert!(
        rejected[1].2.contains("`user` is null"),
        "{}",
        rejected[1].2
    );
    assert!(
        rejected[2].2.contains("`created_at` is the number 17"),
        "{}",
        rejected[2].2
    );
    assert_eq!(scan.rejected[0].comment.author, "ca-bot", "salvaged");

    let resume = c
        .resume("w", "s")
        .await
        .expect("resume reads the thread")
        .resume;
    assert_eq!(resume.phase, "after");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_is_no_comment_list_says_why() {
    let fake = FakeForge::start().await;
    session(&fake);
    Mock::given(method("GET"))
        .and(path_regex(r"/issues(/\d+)?/comments$"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("<html>Sign in to the proxy</html>", "text/html"),
        )
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    let (cat, msg) = category(c.list(&Filter::default(), None).await.unwrap_err());
    assert_eq!(cat, Category::Config, "{msg}");
    assert!(
        msg.contains("text/html") && msg.contains("expected value") && msg.contains("forge url"),
        "{msg}"
    );
}

#[test]
fn credentials_in_the_forge_url_are_refused_without_echoing_them() {
    for url in [
        "https://ca-bot:hunter2-pass@forge.example.com/",
        "http://ca-bot:hunter2-pass@127.0.0.1:3000",
        "https://hunter2-pass@forge.example.com",
        "https://ca-bot:hunter2-pass@forge.example.com:notaport/",
    ] {
        let Err(e) = Client::forge(url, OWNER, REPO)
            .token(BOT_TOKEN.to_string().into())
            .build()
        else {
            panic!("{url} was accepted");
        };
        let msg = e.to_string();
        assert_eq!(e.category(), Category::Config, "{url}: {msg}");
        assert!(!msg.contains("hunter2"), "{url}: {msg}");
        assert!(!msg.contains(BOT_TOKEN), "{url}: {msg}");
        assert!(!format!("{e:?}").contains("hunter2"), "{url}: {e:?}");
    }
    let e = Client::forge(
        "https://ca-bot:hunter2-pass@forge.example.com/x",
        OWNER,
        REPO,
    )
    .token(BOT_TOKEN.to_string().into())
    .build()
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        e.contains("user name or password") && e.contains("https://forge.example.com/x"),
        "{e}"
    );
}

#[test]
fn a_trailing_api_v1_is_dropped_from_the_forge_url() {
    for (given, base) in [
        (
            "https://forge.example.com/api/v1",
            "https://forge.example.com/",
        ),
        (
            "https://forge.example.com/api/v1/",
            "https://forge.example.com/",
        ),
        (
            "https://forge.example.com/git/api/v1/",
            "https://forge.example.com/git/",
        ),
        (
            "https://forge.example.com/git",
            "https://forge.example.com/git/",
        ),
        ("https://forge.example.com", "https://forge.example.com/"),
    ] {
        let c = Client::forge(given, OWNER, REPO)
            .token(BOT_TOKEN.to_string().into())
            .build()
            .unwrap();
        assert_eq!(
            c.thread_raw().describe(),
            format!("{OWNER}/{REPO} on {base}"),
            "{given}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_url_given_with_api_v1_reaches_the_api() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client_at(&format!("{}/api/v1/", fake.uri()), BOT_TOKEN, dir.path())
        .build()
        .unwrap();
    c.post(cp("p")).await.expect("posted");
    assert_eq!(fake.comments_on(n).len(), 1);
    let paths: Vec<String> = fake
        .requests()
        .await
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert!(
        paths.iter().all(|p| !p.contains("/api/v1/api/v1")),
        "{paths:?}"
    );
}

/// A plain TCP server answering every connection with an HTTP 400, as a plain-HTTP server
/// answers a TLS hello. Returns its port and how many connections it took.
fn plain_http_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\
                  Content-Length: 11\r\n\r\nBad Request",
            );
        }
    });
    (port, count)
}

#[tokio::test(flavor = "multi_thread")]
async fn https_to_a_plain_http_server_fails_at_once_as_a_setup_problem() {
    let (port, connections) = plain_http_listener();
    let dir = tempfile::tempdir().unwrap();
    let c = client_at(&format!("https://127.0.0.1:{port}"), BOT_TOKEN, dir.path())
        .retry_budget(Duration::from_secs(20)) // long: the point is that it is not spent
        .build()
        .unwrap();
    let start = Instant::now();
    let (cat, msg) = category(c.resume("w", "s").await.unwrap_err());
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}: {msg}");
    assert_eq!(cat, Category::Config, "{msg}");
    assert!(msg.contains("TLS") && msg.contains("https://"), "{msg}");
    // Discovery asks three things at once at an empty cache (`/settings/api`, `/user`, the
    // issue search), each once: a retry would be a fourth.
    assert!(
        connections.load(Ordering::SeqCst) <= 3,
        "no retry: {} connections: {msg}",
        connections.load(Ordering::SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_lists_odd_comments_as_invalid() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let [null_body, null_user, _] = odd_thread(&fake, n);
    let dir = tempfile::tempdir().unwrap();
    let out = forgestate(&fake.uri(), dir.path(), "list --invalid --json");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json_out(&out);
    assert_eq!(doc["offline"], false, "{doc}");
    assert_eq!(doc["records"].as_array().unwrap().len(), 2, "{doc}");
    let invalid = doc["invalid"].as_array().unwrap();
    let unreadable: Vec<&Value> = invalid
        .iter()
        .filter(|r| r["code"] == "unreadable")
        .collect();
    assert_eq!(unreadable.len(), 3, "{doc}");
    assert_eq!(unreadable[0]["comment"]["id"], null_body);
    assert!(
        unreadable[0]["reason"]
            .as_str()
            .unwrap()
            .contains("`body` is null"),
        "{doc}"
    );
    assert_eq!(unreadable[1]["comment"]["id"], null_user);

    let human = forgestate(&fake.uri(), dir.path(), "list --invalid");
    assert!(human.status.success(), "{}", stderr(&human));
    assert!(
        // Piped: tab-separated rows (id, the store's time, "invalid", ...).
        stdout(&human)
            .lines()
            .any(|l| l.starts_with(&format!("{null_user}\t")) && l.contains("\tinvalid\t")),
        "{}",
        stdout(&human)
    );
    let resume = forgestate(
        &fake.uri(),
        dir.path(),
        "resume --agent w --session s --json",
    );
    assert_eq!(json_out(&resume)["phase"], "after");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_says_why_a_comment_list_is_unreadable() {
    let fake = FakeForge::start().await;
    session(&fake);
    Mock::given(method("GET"))
        .and(path_regex(r"/issues(/\d+)?/comments$"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"message":"not a list"}"#,
            "application/json;charset=utf-8",
        ))
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = forgestate(&fake.uri(), dir.path(), "list -v");
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("expected an array of comments"), "{err}");
    assert!(err.contains("not a list"), "-v shows the answer: {err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_refuses_credentials_in_the_url_and_never_shows_them() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://ca-bot:hunter2-pass@{}/", fake.addr());
    let out = forgestate(
        &url,
        dir.path(),
        "checkpoint --agent w --session s --phase p",
    );
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("user name or password"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(fake.requests().await.is_empty(), "nothing sent");
    for path in paths_under(dir.path()) {
        assert!(!path.to_string_lossy().contains("hunter2"), "{path:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_says_once_that_it_waits_and_what_comes_after() {
    let fake = FakeForge::start().await;
    session(&fake);
    fake.state().down = true;
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    for d in &dirs {
        std::fs::write(
            d.path().join("forgestate.toml"),
            "[forge]\nretry_budget_secs = 1\n",
        )
        .unwrap();
    }
    let post = "checkpoint --agent w --session s --phase p";
    let out = forgestate(&fake.uri(), dirs[0].path(), post);
    let err = stderr(&out);
    assert!(out.status.success(), "spooled: {err}");
    let waits: Vec<&str> = err.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(waits.len(), 1, "{err}");
    assert!(
        waits[0].starts_with("forgestate: warning: forge not answering")
            && waits[0].contains("503")
            && waits[0].contains("up to 1 s, then saving the record to the outbox"),
        "{err}"
    );
    // With a record waiting, later commands make one quick attempt: nothing to announce.
    let quick = forgestate(&fake.uri(), dirs[0].path(), "latest");
    assert!(!stderr(&quick).contains("retrying"), "{}", stderr(&quick));

    // Two fresh directories, each waiting out its own budget: at the same time.
    let uri = fake.uri();
    let quiet_post = format!("-q {post}");
    let (read, quiet) = std::thread::scope(|s| {
        let read = s.spawn(|| forgestate(&uri, dirs[1].path(), "latest"));
        let quiet = s.spawn(|| forgestate(&uri, dirs[2].path(), &quiet_post));
        (read.join().unwrap(), quiet.join().unwrap())
    });
    let err = stderr(&read);
    let waits: Vec<&str> = err.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(waits.len(), 1, "{err}");
    // A fresh machine has no read cache and no outbox: it gives up, and says why.
    assert!(
        waits[0].contains("then giving up, since this machine has no read cache"),
        "{err}"
    );
    assert!(!waits[0].contains("outbox"), "{err}");

    assert!(quiet.status.success(), "{}", stderr(&quiet));
    assert!(!stderr(&quiet).contains("retrying"), "{}", stderr(&quiet));
}
