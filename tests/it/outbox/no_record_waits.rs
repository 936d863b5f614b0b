//! No record waits while the forge answers, and nothing leaves the outbox unchecked (issue #18,
//! classes 1 and 2): a saving command always makes an attempt, backoff or not, and its own record
//! reaches the thread in that command after the backlog; during a backoff an unreachable forge
//! costs a short connect timeout; a command that ends with records spooled says how many and how
//! to flush; a record-shaped file in the outbox is redacted on its way out.

use crate::{common, fake_forge};
use std::path::Path;
use std::time::{Duration, Instant};

use common::cli::{Bin, stderr};
use fake_forge::outbox::{cp, phases, spool};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::backend::AnyThread;
use forgestate::durable::{DrainPolicy, Outbox};
use forgestate::format::{Record, Renderer, parse};
use forgestate::{Client, Outcome};
use serde_json::json;

fn client_at(url: &str, dir: &Path, drain: DrainPolicy, connect: Duration) -> Client<AnyThread> {
    fake_forge::client_at(url, BOT_TOKEN, dir)
        .outbox(dir.join("outbox"))
        .retry_budget(Duration::from_millis(300))
        .timeouts(connect, Duration::from_secs(5))
        .drain(drain)
        .build()
        .expect("client")
}

/// A long backoff: after one failure, the old policy made no request for five minutes.
fn backoff(budget: Duration) -> DrainPolicy {
    DrainPolicy {
        budget,
        max_backoff: Duration::from_secs(300),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn during_a_backoff_a_fresh_record_still_reaches_a_forge_that_answers_slowly() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client_at(
        &fake.uri(),
        dir.path(),
        backoff(Duration::from_secs(10)),
        Duration::from_secs(1),
    );
    fake.state().down = true;
    spool(&c, "one").await;
    assert!(
        c.outbox().unwrap().drain_state().failures >= 1,
        "a backoff is running"
    );
    // The forge answers again, slowly.
    fake.state().down = false;
    fake.state().latency = Duration::from_millis(300);
    match c.save(cp("two")).await {
        Outcome::Posted(p) => assert_eq!(p.record.phase(), Some("two")),
        other => panic!("the fresh record waited in the outbox: {other:?}"),
    }
    assert_eq!(
        phases(&fake, n),
        ["one", "two"],
        "after the backlog, in order"
    );
    assert_eq!(c.outbox().unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_saving_command_posts_its_record_past_the_drain_budget_while_the_forge_answers() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let policy = DrainPolicy {
        budget: Duration::from_millis(50),
        max_backoff: Duration::ZERO,
    };
    let c = client_at(&fake.uri(), dir.path(), policy, Duration::from_secs(1));
    fake.state().down = true;
    for p in ["one", "two", "three"] {
        spool(&c, p).await;
    }
    fake.state().down = false;
    fake.state().latency = Duration::from_millis(100);
    let outcome = c.save(cp("four")).await;
    assert!(matches!(outcome, Outcome::Posted(_)), "{outcome:?}");
    assert_eq!(phases(&fake, n), ["one", "two", "three", "four"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn during_a_backoff_an_unreachable_forge_costs_a_short_connect_not_the_connect_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // A loopback listener that never accepts, its queue full: a connection attempt hangs.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let hole = socket.listen(1).unwrap();
    let addr = hole.local_addr().unwrap();
    let mut held = Vec::new();
    for _ in 0..8 {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        if let Ok(Ok(conn)) =
            tokio::time::timeout(Duration::from_millis(200), s.connect(addr)).await
        {
            held.push(conn);
        }
    }
    // Connect and request timeouts of 20 s; the attempt during the backoff connects with 1.5 s.
    let c = fake_forge::client_at(&format!("http://{addr}"), BOT_TOKEN, dir.path())
        .outbox(dir.path().join("outbox"))
        .retry_budget(Duration::ZERO)
        .timeouts(Duration::from_secs(20), Duration::from_secs(20))
        .drain(backoff(Duration::from_secs(10)))
        .build()
        .expect("client");
    // A record waits from an earlier failure, and the backoff it started is running.
    let outbox = c.outbox().unwrap();
    outbox
        .push(&Renderer::embedded().unwrap().render(&cp("one")).unwrap())
        .unwrap();
    outbox.record_failure("the forge did not answer");
    let started = Instant::now();
    let outcome = c.save(cp("two")).await;
    let took = started.elapsed();
    assert!(matches!(outcome, Outcome::Spooled { .. }), "{outcome:?}");
    assert!(took < Duration::from_secs(8), "the attempt took {took:?}");
    assert_eq!(c.outbox().unwrap().len(), 2, "nothing lost");
    drop(held);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_ends_with_records_spooled_says_how_many_and_how_to_flush() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\nrequest_timeout_secs = 3\n",
    )
    .unwrap();
    fake.state().down = true;
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    for (phase, count) in [("one", 1), ("two", 2)] {
        let out = bin.line(&format!("checkpoint --agent w --session s --phase {phase}"));
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("{count} record(s) wait in the outbox"))
                && err.contains("`forgestate flush`"),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_shaped_file_with_secrets_in_the_outbox_is_redacted_on_its_way_out() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client_at(
        &fake.uri(),
        dir.path(),
        backoff(Duration::from_secs(10)),
        Duration::from_secs(1),
    );
    // A rendered body, edited to add secrets, planted in the outbox.
    let record = Record::checkpoint("w", "s", "p", json!({"branch": "main"})).unwrap();
    let body = Renderer::embedded().unwrap().render(&record).unwrap();
    let edited = body.replace(
        "\"branch\": \"main\"",
        "\"branch\": \"main\",\n  \"github_token\": \"ghp_0123456789abcdefghijABCDEFGHIJ012345\",\n  \"db_password\": \"hunter2\"",
    );
    assert!(edited.contains("hunter2"), "the edit took: {edited}");
    let outbox = Outbox::new(dir.path().join("elsewhere"));
    outbox.push(&edited).unwrap();
    let report = c.durable_raw().flush_from(&outbox).await;
    assert_eq!(report.posted.len(), 1, "{report:?}");
    let bodies: Vec<String> = fake.comments_on(n).into_iter().map(|c| c.body).collect();
    assert_eq!(bodies.len(), 1);
    assert!(
        !bodies[0].contains("hunter2") && !bodies[0].contains("ghp_0123"),
        "{}",
        bodies[0]
    );
    let posted = parse(&bodies[0]).unwrap();
    assert_eq!(posted.data()["db_password"], "[REDACTED]");
    assert_eq!(posted.data()["github_token"], "[REDACTED]");
    assert_eq!(posted.redacted, Some(2));
    assert_eq!(posted.id, record.id, "the same record, cleaned");
    // A flush again finds nothing to post twice.
    let again = c.durable_raw().flush_from(&outbox).await;
    assert!(again.posted.is_empty() && outbox.is_empty(), "{again:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_is_a_library_function_for_other_paths_out() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client_at(
        &fake.uri(),
        dir.path(),
        backoff(Duration::from_secs(10)),
        Duration::from_secs(1),
    );
    let record = Record::checkpoint("w", "s", "p", json!({"passphrase": "open sesame"})).unwrap();
    let body = Renderer::embedded().unwrap().render(&record).unwrap();
    let out = c.outbound(&body).unwrap();
    assert!(!out.contains("open sesame"), "{out}");
    let clean = Renderer::embedded()
        .unwrap()
        .render(&Record::checkpoint("w", "s", "p", json!({"n": 1})).unwrap())
        .unwrap();
    assert_eq!(
        c.outbound(&clean).unwrap(),
        clean,
        "a clean body is unchanged"
    );
    let err = c.outbound("just text").unwrap_err().to_string();
    assert!(err.contains("not a record"), "{err}");
}
