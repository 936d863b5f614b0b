//! Waits that fit the work (issue #42): a forge that is slow rather than down. A command with an
//! answer without the forge (a save spools, a warm read answers offline) answers it at its
//! deadline whatever the forge sends; one without (a cold read, `rotate`) waits for a forge that
//! answers late, saying once why; a balancer with a dead backend still takes the record. Each
//! through the faces that answer it: the CLI, `call` and MCP; `rotate` and `flush` through the
//! CLI (they are not MCP tools' everyday work, and `call` runs the same verb).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{json_ok, spooled, timed};
use crate::common::cli::{Bin, stderr, stdout, words};
use crate::fake_forge::outage::{Front, Mode};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use crate::mcp_client::{call, connect, ok};

/// How late the slow list answers: past the 3 s wait budget, well within the 60 s patience.
const LATE: Duration = Duration::from_millis(4500);

/// A fake behind a front, its session issue, and a warm machine in `warm` that posted one
/// checkpoint (`planned`) and read the thread (its read cache holds it).
async fn warmed(warm: &Path) -> (FakeForge, Front, u64) {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let front = fake.front().await;
    let uri = front.uri();
    let (saved, _) = json_ok(
        &uri,
        warm,
        "checkpoint --agent w --session s --phase planned --json",
    );
    assert_eq!(saved["posted"], true, "{saved}");
    let (list, _) = json_ok(&uri, warm, "list --agent w --json");
    assert_eq!(list["records"].as_array().map(Vec::len), Some(1), "{list}");
    (fake, front, n)
}

/// `forgestate call VERB` in `dir` with `request` on stdin: the exit code and the answer.
fn call_verb(uri: &str, dir: &Path, verb: &str, request: Value) -> (Option<i32>, Value) {
    let out = Bin::new(dir)
        .forge(uri, OWNER, REPO, BOT_TOKEN)
        .stdin(request.to_string())
        .run(&words(&format!("call {verb}")));
    let answer = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("call {verb}: not JSON ({e}): {}", stderr(&out)));
    (out.status.code(), answer)
}

/// How many lines of `text` say that the command waits for the forge, and why.
fn waiting_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains("waiting for it up to"))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cold_resume_waits_for_a_list_that_answers_late_on_every_face() {
    let warm = tempfile::tempdir().unwrap();
    let (_fake, front, _) = warmed(warm.path()).await;
    let uri = front.uri();
    front.set(Mode::SlowList(LATE));

    // The CLI: a machine that never read the thread has no answer without the forge.
    let cold = tempfile::tempdir().unwrap();
    let (out, _) = timed(
        &uri,
        cold.path(),
        &[],
        "resume --agent w --session s --json",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let resume: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(resume["offline"], false, "{resume}");
    assert_eq!(resume["phase"], "planned", "{resume}");
    assert_eq!(
        waiting_lines(&stderr(&out)),
        1,
        "says once that it waits, and why: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("no read cache"), "{}", stderr(&out));

    // `call`, on another cold machine.
    let cold = tempfile::tempdir().unwrap();
    let (code, resume) = call_verb(
        &uri,
        cold.path(),
        "resume",
        json!({"agent": "w", "session": "s"}),
    );
    assert_eq!(code, Some(0), "{resume}");
    assert_eq!(resume["phase"], "planned", "{resume}");
    assert_eq!(resume["offline"], false, "{resume}");

    // MCP, on another.
    let cold = tempfile::tempdir().unwrap();
    let bin = Bin::new(cold.path()).forge(&uri, OWNER, REPO, BOT_TOKEN);
    let (client, _stderr) = connect(&bin, "").await;
    let resume = call(&client, "resume", json!({"agent": "w", "session": "s"})).await;
    let resume = ok(&resume);
    assert_eq!(resume["phase"], "planned", "{resume}");
    assert_eq!(resume["offline"], false, "{resume}");
    client.cancel().await.ok();

    // The warm machine has an answer of its own: it gives it at its deadline.
    let (resume, _) = json_ok(&uri, warm.path(), "resume --agent w --session s --json");
    assert_eq!(resume["offline"], true, "{resume}");
    assert_eq!(resume["phase"], "planned", "{resume}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rotate_waits_for_a_list_that_answers_late() {
    let warm = tempfile::tempdir().unwrap();
    let (fake, front, n) = warmed(warm.path()).await;
    let uri = front.uri();
    front.set(Mode::SlowList(LATE));
    let (out, _) = timed(&uri, warm.path(), &[], "rotate --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(waiting_lines(&stderr(&out)), 1, "{}", stderr(&out));
    let closed = fake
        .state()
        .issues
        .iter()
        .any(|i| i.number == n && i.closed);
    assert!(closed, "the old session issue is closed: rotated");
}

#[tokio::test(flavor = "multi_thread")]
async fn flush_waits_for_a_list_that_answers_late() {
    let warm = tempfile::tempdir().unwrap();
    let (fake, front, n) = warmed(warm.path()).await;
    let uri = front.uri();
    let d = warm.path();
    front.set(Mode::Unavailable);
    let (saved, _) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase built --json",
    );
    assert!(saved["spooled"].is_string(), "{saved}");
    // `flush` has nothing to answer without the forge: it waits for the late list (it looks
    // for copies already posted before posting).
    front.set(Mode::SlowList(LATE));
    let (out, _) = timed(&uri, d, &[], "flush --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(spooled(d).is_empty(), "{}", stderr(&out));
    assert_eq!(fake.comments_on(n).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dribbled_body_is_cut_off_at_the_deadline_on_every_face() {
    let warm = tempfile::tempdir().unwrap();
    let (_fake, front, _) = warmed(warm.path()).await;
    let uri = front.uri();
    front.set(Mode::Dribble);
    let d = warm.path();

    // The CLI: the posted comment's answer dribbles in for far longer than the budget.
    let (saved, _) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase built --json",
    );
    assert!(saved["spooled"].is_string(), "{saved}");
    assert_eq!(spooled(d).len(), 1);
    let (resume, _) = json_ok(&uri, d, "resume --agent w --session s --json");
    assert_eq!(resume["offline"], true, "{resume}");
    assert_eq!(resume["phase"], "built", "the outbox's record: {resume}");

    // `call`.
    let (code, saved) = call_verb(
        &uri,
        d,
        "checkpoint",
        json!({"agent": "w", "session": "s", "phase": "tested"}),
    );
    assert_eq!(code, Some(0), "{saved}");
    assert!(saved["spooled"].is_string(), "{saved}");
    let (code, resume) = call_verb(&uri, d, "resume", json!({"agent": "w", "session": "s"}));
    assert_eq!(code, Some(0), "{resume}");
    assert_eq!(resume["offline"], true, "{resume}");

    // MCP: each tool call is a command with its own deadline. Past the outage marker's
    // 30 s each gets its whole budget again; within it, one quick attempt: spooled either way.
    let bin = Bin::new(d).forge(&uri, OWNER, REPO, BOT_TOKEN);
    let (client, _stderr) = connect(&bin, "").await;
    let args = json!({"agent": "w", "session": "s", "phase": "shipped"});
    let saved = call(&client, "checkpoint", args).await;
    assert!(ok(&saved)["spooled"].is_string(), "{saved:?}");
    let resume = call(&client, "resume", json!({"agent": "w", "session": "s"})).await;
    let resume = ok(&resume);
    assert_eq!(resume["offline"], true, "{resume}");
    assert_eq!(resume["phase"], "shipped", "{resume}");
    client.cancel().await.ok();
}

/// A checkpoint behind a balancer whose every other request fails is posted, on every face.
async fn posted_behind_a_dead_backend(drop: bool) {
    let warm = tempfile::tempdir().unwrap();
    let (fake, front, n) = warmed(warm.path()).await;
    let uri = front.uri();
    front.set(Mode::Alternating { drop });
    let d = warm.path();
    for phase in ["built", "tested"] {
        let line = format!("checkpoint --agent w --session s --phase {phase} --json");
        let (saved, _) = json_ok(&uri, d, &line);
        assert_eq!(saved["posted"], true, "{phase}: {saved}");
    }
    let (code, saved) = call_verb(
        &uri,
        d,
        "checkpoint",
        json!({"agent": "w", "session": "s", "phase": "reviewed"}),
    );
    assert_eq!(code, Some(0), "{saved}");
    assert_eq!(saved["posted"], true, "{saved}");
    let bin = Bin::new(d).forge(&uri, OWNER, REPO, BOT_TOKEN);
    let (client, _stderr) = connect(&bin, "").await;
    for phase in ["merged", "released"] {
        let args = json!({"agent": "w", "session": "s", "phase": phase});
        let saved = call(&client, "checkpoint", args).await;
        assert_eq!(ok(&saved)["posted"], true, "{phase}: {saved:?}");
    }
    client.cancel().await.ok();
    assert!(spooled(d).is_empty(), "nothing waits in the outbox");
    assert_eq!(fake.comments_on(n).len(), 6, "each record once");
    // A rotation creates an issue and posts to it: each re-post gets its own chance too.
    let (out, _) = timed(&uri, d, &[], "rotate --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let open: Vec<u64> = fake
        .state()
        .issues
        .iter()
        .filter(|i| !i.closed)
        .map(|i| i.number)
        .collect();
    assert_eq!(
        open.len(),
        1,
        "one open session issue after the rotation: {open:?}"
    );
    assert_ne!(open[0], n, "rotated");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_save_behind_a_balancer_answering_503_every_other_request_is_posted() {
    posted_behind_a_dead_backend(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_save_behind_a_balancer_dropping_every_other_request_is_posted() {
    posted_behind_a_dead_backend(true).await;
}
