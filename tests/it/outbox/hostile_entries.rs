//! An outbox with hostile entries: a FIFO among the entries never hangs a command, a drain's
//! time bound covers the "who am I" look, a blocked `dead/` never makes a flush spin, and an
//! outbox anyone may write to is refused.

use crate::common::mkfifo;
use crate::{common, fake_forge};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::cli::{Bin, stderr};
use fake_forge::outbox::{cp, phases, spool};
use fake_forge::{BOT_TOKEN, FakeForge, Fault, OWNER, REPO, session};
use forgestate::backend::AnyThread;
use forgestate::durable::DrainPolicy;
use forgestate::{Category, Client, Outcome};

fn client(fake: &FakeForge, dir: &Path, retry: Duration, drain: Duration) -> Client<AnyThread> {
    fake_forge::client(fake, BOT_TOKEN, dir)
        .outbox(dir.join("outbox"))
        .retry_budget(retry)
        .timeouts(Duration::from_secs(1), Duration::from_secs(3))
        .drain(DrainPolicy {
            budget: drain,
            max_backoff: Duration::ZERO,
        })
        .build()
        .expect("client")
}

async fn comment_posts(fake: &FakeForge) -> usize {
    fake.requests()
        .await
        .iter()
        .filter(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/comments"))
        .count()
}

/// Runs `work` on its own thread and runtime; fails the test if it takes longer than `limit`
/// (a blocking open would never let a tokio timeout fire).
fn within<T: Send + 'static>(
    limit: Duration,
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let _ = tx.send(rt.block_on(work));
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not return within {limit:?}: it hangs"))
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_in_the_outbox_hangs_nothing_and_the_real_records_still_drain() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let c = client(
        &fake,
        &d,
        Duration::from_millis(300),
        Duration::from_secs(5),
    );
    fake.state().down = true;
    spool(&c, "one").await;
    spool(&c, "two").await;
    let ob = c.outbox().unwrap().clone();
    // First in the queue, and a FIFO among the dead letters' reasons too.
    mkfifo(&ob.dir().join("00000000000000000001-0000000001-000000.rec"));
    std::fs::create_dir_all(ob.dead_dir()).unwrap();
    mkfifo(&ob.dead_dir().join("x.rec.why.json"));
    let _ = std::fs::remove_file(ob.dir().join(".state.json"));
    mkfifo(&ob.dir().join(".state.json"));
    let started = Instant::now();
    let letters = within(Duration::from_secs(5), {
        let ob = ob.clone();
        async move { ob.dead_letters().map(|l| l.len()) }
    });
    assert_eq!(letters.unwrap(), 0, "a FIFO is not a dead letter");
    let summary = within(Duration::from_secs(5), {
        let root = d.join("outbox");
        async move { forgestate::durable::survey(&[root]).len() }
    });
    assert_eq!(summary, 1);
    fake.state().down = false;
    let uri = fake.uri();
    let (phase, resumed_offline) = within(Duration::from_secs(5), {
        let d = d.clone();
        async move {
            let c = fake_forge::client_at(&uri, BOT_TOKEN, &d)
                .outbox(d.join("outbox"))
                .retry_budget(Duration::from_millis(300))
                .build()
                .unwrap();
            let three = c.save(cp("three")).await;
            assert!(matches!(three, Outcome::Posted(_)), "{three:?}");
            let r = c.resume("implementation-worker", "s1").await.unwrap();
            (r.resume.phase, r.resume.offline)
        }
    });
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!resumed_offline);
    assert_eq!(phase, "three");
    assert_eq!(
        phases(&fake, n),
        ["one", "two", "three"],
        "drained in order"
    );
    assert_eq!(ob.len(), 0, "the FIFO was moved aside with the junk");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_drain_bounds_the_who_am_i_look_too() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    // A full retry budget of 30 s, as in real use; the drain's own budget is 1 s.
    let c = client(
        &fake,
        dir.path(),
        Duration::from_millis(300),
        Duration::from_secs(1),
    );
    fake.state().down = true;
    spool(&c, "one").await;
    fake.state().down = false;
    fake.state()
        .path_delays
        .push(("/user".into(), Duration::from_secs(10)));
    let c = client(
        &fake,
        dir.path(),
        Duration::from_secs(30),
        Duration::from_secs(1),
    );
    let started = Instant::now();
    let report = c.durable_raw().drain().await;
    let took = started.elapsed();
    // 1 s of budget (or the 1 s floor) plus the listing's request, and slack for a loaded box.
    assert!(took < Duration::from_secs(7), "the drain took {took:?}");
    let error = report.error.expect("the drain stops with an error");
    assert_eq!(error.category(), Category::TempFail, "{error}");
    assert!(
        report.posted.is_empty(),
        "never posts without knowing who we are"
    );
    assert_eq!(report.left, 1, "the record still waits");
    assert!(phases(&fake, n).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_record_that_cannot_be_buried_is_posted_once_and_the_flush_fails() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        &fake,
        dir.path(),
        Duration::from_millis(300),
        Duration::from_secs(5),
    );
    fake.state().down = true;
    spool(&c, "refused").await;
    fake.state().down = false;
    std::fs::write(c.outbox().unwrap().dead_dir(), "not a directory").unwrap();
    for _ in 0..5 {
        fake.inject("/comments", Fault::Status(422));
    }
    let before = comment_posts(&fake).await;
    let report = c.flush().await;
    assert_eq!(comment_posts(&fake).await - before, 1, "{report:?}");
    let error = report.error.expect("the flush fails");
    assert_eq!(error.category(), Category::Io, "{error}");
    assert_eq!(report.left, 1);
    assert!(phases(&fake, n).is_empty());
}

/// The binary against the fake with short budgets, its outbox under `dir`.
fn run(fake: &FakeForge, dir: &Path, line: &str) -> std::process::Output {
    std::fs::write(
        dir.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\nrequest_timeout_secs = 3\n",
    )
    .unwrap();
    Bin::new(dir)
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .line(line)
}

fn only_outbox(fake: &FakeForge, dir: &Path) -> PathBuf {
    let listed = run_json(&run(fake, dir, "outbox --json"));
    PathBuf::from(listed["outboxes"][0]["dir"].as_str().expect("one outbox"))
}

fn run_json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(out)))
}

#[tokio::test(flavor = "multi_thread")]
async fn junk_that_cannot_be_moved_aside_is_warned_about_once_per_command() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fake.state().down = true;
    let out = run(&fake, d, "checkpoint --agent w --session s --phase p");
    assert!(out.status.success(), "{}", stderr(&out));
    let ob = only_outbox(&fake, d);
    std::fs::write(
        ob.join("00000000000000000001-0000000001-000000.rec"),
        "junk",
    )
    .unwrap();
    std::fs::write(ob.join("dead"), "not a directory").unwrap();
    fake.state().down = false;
    let out = run(&fake, d, "flush");
    let warnings = stderr(&out).matches("cannot be moved aside").count();
    assert_eq!(warnings, 1, "{}", stderr(&out));
    assert_eq!(phases(&fake, n), ["p"], "the real record still went out");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn an_outbox_anyone_may_write_to_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        &fake,
        dir.path(),
        Duration::from_millis(300),
        Duration::from_secs(5),
    );
    fake.state().down = true;
    spool(&c, "mine").await;
    let ob = c.outbox().unwrap().clone();
    drop(ob.try_lock().unwrap());
    let lock = ob.dir().join(".flush.lock");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&lock), 0o600, "the lock file is private");
    // An operator-chosen shared directory: anyone may drop a "record" in it.
    std::fs::set_permissions(ob.dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    fake.state().down = false;
    let report = c.flush().await;
    let error = report
        .error
        .expect("the flush refuses the directory")
        .to_string();
    assert!(error.contains("chmod 700"), "{error}");
    assert!(phases(&fake, n).is_empty(), "nothing is posted from it");
    let read = c.resume("implementation-worker", "s1").await;
    assert!(read.is_err(), "nothing in it answers a read: {read:?}");
    std::fs::set_permissions(ob.dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    c.flush().await.verdict().unwrap();
    assert_eq!(phases(&fake, n), ["mine"]);
}
