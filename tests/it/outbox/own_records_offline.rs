//! A machine's own records are part of what its offline answer knows (issue #42, the soak's
//! "steps listed twice"): a record this machine posted, or spooled and a later drain found
//! already posted, answers from this machine even when the forge cannot be read and its read
//! cache was written before the post.

use std::path::Path;
use std::time::Duration;

use crate::common::cli::{Bin, parse_ok, stderr, words};
use crate::fake_forge::{BOT_TOKEN, FakeForge, Fault, OWNER, REPO, session};

const CONFIG: &str =
    "[forge]\nretry_budget_secs = 1\nquick_timeout_ms = 300\nrequest_timeout_secs = 1\n";

fn bin(fake: &FakeForge, home: &Path) -> Bin {
    std::fs::write(home.join("forgestate.toml"), CONFIG).unwrap();
    Bin::new(home).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
}

fn ok(bin: &Bin, line: &str) -> serde_json::Value {
    let args = words(line);
    let out = bin.run(&args);
    assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
    parse_ok(&args, &out)
}

/// The forge down, this machine's `resume` answers offline with `phase`.
fn offline_resume_shows(fake: &FakeForge, bin: &Bin, phase: &str) {
    fake.state().down = true;
    let resume = ok(bin, "resume --agent w --session s --json");
    fake.state().down = false;
    assert_eq!(resume["offline"], true, "{resume}");
    assert_eq!(
        resume["phase"], phase,
        "the machine's own newest record is part of its offline answer: {resume}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_posted_record_answers_offline_though_the_read_cache_predates_it() {
    let fake = FakeForge::start().await;
    session(&fake);
    let home = tempfile::tempdir().unwrap();
    let bin = bin(&fake, home.path());
    ok(
        &bin,
        "checkpoint --agent w --session s --phase step_1 --json",
    );
    // The read cache now holds step_1.
    assert_eq!(
        ok(&bin, "resume --agent w --session s --json")["phase"],
        "step_1"
    );
    let saved = ok(
        &bin,
        "checkpoint --agent w --session s --phase step_2 --json",
    );
    assert!(saved["spooled"].is_null(), "posted at once: {saved}");
    offline_resume_shows(&fake, &bin, "step_2");
    // Once a read of the forge holds it, the answer is the forge's, posted.
    let resume = ok(&bin, "resume --agent w --session s --json");
    assert_eq!(resume["phase"], "step_2");
    assert_eq!(resume["offline"], false);
    assert_eq!(
        resume["checkpoint"]["comment"]["pending"], false,
        "{resume}"
    );
    offline_resume_shows(&fake, &bin, "step_2");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flushed_record_whose_post_answer_was_lost_answers_offline() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let home = tempfile::tempdir().unwrap();
    let bin = bin(&fake, home.path());
    ok(
        &bin,
        "checkpoint --agent w --session s --phase step_1 --json",
    );
    assert_eq!(
        ok(&bin, "resume --agent w --session s --json")["phase"],
        "step_1"
    );
    fake.state().down = true;
    let saved = ok(
        &bin,
        "checkpoint --agent w --session s --phase step_2 --json",
    );
    assert!(saved["spooled"].is_string(), "spooled: {saved}");
    fake.state().down = false;
    // The flush's post commits, then its answer comes too late: the flush finds it in the
    // thread and takes it out of the queue. The read cache is older than it.
    fake.inject("/comments", Fault::CommitThenDelay(Duration::from_secs(3)));
    let flushed = ok(&bin, "flush --json");
    assert_eq!(flushed["left"], 0, "{flushed}");
    let posted = fake
        .comments_on(n)
        .iter()
        .filter(|c| c.body.contains("step_2"))
        .count();
    assert_eq!(posted, 1, "the forge holds it once");
    offline_resume_shows(&fake, &bin, "step_2");
}
