//! Never block an agent (issue #29): in an outage (refused connections, 503 on every request, a
//! forge that accepts and never answers) every verb returns within the wait budget, saves spool,
//! reads answer offline from this machine's read cache and outbox, the next command spends one
//! quick attempt, and the first command after the forge is back posts the backlog in order.

mod flush_patience;
mod kinds;
mod local;
mod mcp;
mod patience;
mod recovery;
mod setting;
mod slow;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::cli::{Bin, parse_ok, stderr, words};
use crate::common::files_under;
use crate::fake_forge::{BOT_TOKEN, OWNER, REPO};

/// The bound on any command in an outage under the default 3 s budget, doubled.
pub const GENEROUS: Duration = Duration::from_secs(6);

/// Runs the binary in `dir` against the forge at `uri` with `env`, timing it.
pub fn timed(uri: &str, dir: &Path, env: &[(&str, &str)], line: &str) -> (Output, Duration) {
    let started = Instant::now();
    let out = Bin::new(dir)
        .forge(uri, OWNER, REPO, BOT_TOKEN)
        .envs(env)
        .run(&words(line));
    (out, started.elapsed())
}

/// [`timed`] for a `--json` command that must exit 0: its answer and how long it took.
pub fn json_ok(uri: &str, dir: &Path, line: &str) -> (serde_json::Value, Duration) {
    let (out, took) = timed(uri, dir, &[], line);
    assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
    (parse_ok(&words(line), &out), took)
}

/// The records waiting in the outboxes under `dir`.
pub fn spooled(dir: &Path) -> Vec<PathBuf> {
    files_under(&dir.join("state/forgestate/outbox"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rec"))
        .filter(|p| !p.components().any(|c| c.as_os_str() == "dead"))
        // Posted records kept for this machine's offline answers are not waiting.
        .filter(|p| !p.components().any(|c| c.as_os_str() == "landed"))
        .collect()
}
