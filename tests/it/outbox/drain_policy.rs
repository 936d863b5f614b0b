//! The durability layer's policy, through the front door: a slow forge still drains the outbox
//! without `flush`, a command waits a bounded time, a refused record never blocks the queue, a
//! file that is not a record is never posted, flush skips what the thread holds, and reads see
//! the outbox before the thread.

use crate::fake_forge;
use std::path::Path;
use std::time::{Duration, Instant};

use fake_forge::outbox::{cp, phases, spool};
use fake_forge::{BOT_TOKEN, FakeForge, Fault, session};
use forgestate::backend::AnyThread;
use forgestate::durable::DrainPolicy;
use forgestate::{Client, Outcome};

/// A forge client with short budgets and an outbox in `dir/outbox`; `drain` and `request` set
/// the policy under test.
fn client(
    fake: &FakeForge,
    dir: &Path,
    drain: DrainPolicy,
    request: Duration,
) -> Client<AnyThread> {
    fake_forge::client(fake, BOT_TOKEN, dir)
        .outbox(dir.join("outbox"))
        .retry_budget(Duration::from_millis(300))
        .timeouts(Duration::from_secs(1), request)
        .drain(drain)
        .build()
        .expect("client")
}

fn no_backoff(budget: Duration) -> DrainPolicy {
    DrainPolicy {
        budget,
        max_backoff: Duration::ZERO,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_forge_still_drains_the_outbox_without_flush() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        &fake,
        dir.path(),
        no_backoff(Duration::from_secs(10)),
        Duration::from_secs(5),
    );
    fake.state().down = true;
    for p in ["one", "two", "three"] {
        spool(&c, p).await;
    }
    assert_eq!(c.outbox().unwrap().len(), 3);
    // Back up, but every answer takes longer than the quick timeout (which a drain once used).
    fake.state().down = false;
    fake.state().latency = fake_forge::QUICK_TIMEOUT + Duration::from_millis(100);
    let c = client(
        &fake,
        dir.path(),
        no_backoff(Duration::from_secs(10)),
        Duration::from_secs(5),
    );
    let answer = c.resume("implementation-worker", "s1").await.unwrap();
    assert_eq!(
        phases(&fake, n),
        ["one", "two", "three"],
        "drained in order"
    );
    assert_eq!(c.outbox().unwrap().len(), 0);
    assert!(!answer.resume.offline);
    assert_eq!(answer.resume.phase, "three");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_waits_a_bounded_time_for_a_forge_that_never_answers_in_time() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let policy = no_backoff(Duration::from_secs(1));
    let c = client(&fake, dir.path(), policy, Duration::from_secs(1));
    fake.state().down = true;
    spool(&c, "one").await;
    spool(&c, "two").await;
    fake.state().down = false;
    // Every answer comes after the 1 s request timeout.
    fake.state().latency = Duration::from_secs(4);
    let c = client(&fake, dir.path(), policy, Duration::from_secs(1));
    let started = Instant::now();
    let outcome = c.save(cp("three")).await;
    let took = started.elapsed();
    assert!(matches!(outcome, Outcome::Spooled { .. }), "{outcome:?}");
    // budget + 2 request timeouts, and slack for a loaded machine.
    assert!(took < Duration::from_secs(5), "save blocked for {took:?}");
    assert_eq!(c.outbox().unwrap().len(), 3, "nothing lost");
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_failed_drain_later_saves_make_one_cheap_attempt_each() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let policy = DrainPolicy {
        budget: Duration::from_secs(5),
        max_backoff: Duration::from_secs(300),
    };
    let c = client(&fake, dir.path(), policy, Duration::from_secs(2));
    fake.state().down = true;
    spool(&c, "one").await;
    let before = fake.requests().await.len();
    let started = Instant::now();
    for p in ["two", "three", "four"] {
        spool(&c, p).await;
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    // One attempt is one try of finding the session issue, whose three requests (the page
    // size, the token's login, the issue search) go at once at an empty cache.
    assert_eq!(
        fake.requests().await.len(),
        before + 3 * 3,
        "within the backoff, a save makes one attempt (no retries): the records queue up"
    );
    let state = c.outbox().unwrap().drain_state();
    assert!(state.failures >= 1);
    assert!(state.last_error.unwrap_or_default().contains("503"));
    // The explicit flush ignores the backoff.
    fake.state().down = false;
    c.flush().await.verdict().unwrap();
    assert_eq!(c.outbox().unwrap().len(), 0);
    assert_eq!(c.outbox().unwrap().drain_state().failures, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_record_moves_to_the_dead_letters_and_the_queue_goes_on() {
    for status in [422, 413] {
        let fake = FakeForge::start().await;
        let n = session(&fake);
        let dir = tempfile::tempdir().unwrap();
        let c = client(
            &fake,
            dir.path(),
            no_backoff(Duration::from_secs(10)),
            Duration::from_secs(5),
        );
        fake.state().down = true;
        let refused = spool(&c, "refused").await;
        spool(&c, "fine-1").await;
        spool(&c, "fine-2").await;
        fake.state().down = false;
        fake.inject("/comments", Fault::Status(status));
        let report = c.flush().await;
        assert_eq!(report.dead.len(), 1, "{status}: {report:?}");
        assert!(report.error.is_none(), "{status}: {report:?}");
        assert_eq!(phases(&fake, n), ["fine-1", "fine-2"], "{status}");
        let dead = &report.dead[0];
        assert_eq!(dead.path.file_name(), refused.file_name());
        assert!(
            dead.answer
                .as_deref()
                .unwrap_or("")
                .contains(&status.to_string())
        );
        let letters = c.outbox().unwrap().dead_letters().unwrap();
        assert_eq!(letters.len(), 1, "the reason is kept beside the record");
        let body = std::fs::read_to_string(&letters[0].path).unwrap();
        assert!(body.contains("Phase: refused"), "the record itself is kept");
        assert_eq!(c.outbox().unwrap().len(), 0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_is_not_a_record_is_never_posted() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        &fake,
        dir.path(),
        no_backoff(Duration::from_secs(10)),
        Duration::from_secs(5),
    );
    fake.state().down = true;
    let real = spool(&c, "real").await;
    let outbox = real.parent().unwrap().to_path_buf();
    let body = std::fs::read_to_string(&real).unwrap();
    let junk: [(&str, Vec<u8>); 4] = [
        ("00000000000000000001-0000000001-000000.rec", Vec::new()),
        (
            "00000000000000000002-0000000001-000000.rec",
            body.as_bytes()[..body.len() / 2].to_vec(),
        ),
        (
            "00000000000000000003-0000000001-000000.rec",
            vec![0xff, 0xfe, b'[', 0x80],
        ),
        (
            "00000000000000000004-0000000001-000000.rec",
            b"rm -rf / # someone else's text".to_vec(),
        ),
    ];
    for (name, bytes) in &junk {
        std::fs::write(outbox.join(name), bytes).unwrap();
    }
    fake.state().down = false;
    let report = c.flush().await;
    assert_eq!(report.moved_aside.len(), 4, "{report:?}");
    assert_eq!(phases(&fake, n), ["real"], "only the real record is posted");
    for c in fake.comments_on(n) {
        assert!(!c.body.contains("someone else"));
    }
    assert_eq!(
        std::fs::read_dir(outbox.join("dead")).unwrap().count(),
        8,
        "4 files + 4 reasons"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn flush_skips_a_record_the_thread_already_holds() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        &fake,
        dir.path(),
        no_backoff(Duration::from_secs(10)),
        Duration::from_secs(5),
    );
    fake.state().down = true;
    let path = spool(&c, "once").await;
    // The post was committed after all (its answer was lost): the thread holds the body.
    let body = std::fs::read_to_string(&path).unwrap();
    fake.add_comment(n, "ca-bot", &body);
    fake.state().down = false;
    let report = c.flush().await;
    assert_eq!(report.already_posted, 1);
    assert!(report.posted.is_empty());
    assert_eq!(phases(&fake, n), ["once"], "never twice");
}
