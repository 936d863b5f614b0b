//! Progress bars: drawn on stderr for a big flush when stderr is a terminal, and never when it is
//! not, never with `--json` or `--quiet`, never on stdout.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::{Command, Output};

use common::cli::{Bin, parse_ok, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};

/// What the bar says while the outbox is posted.
const TASK: &str = "posting the outbox";
/// More records than the least amount of work worth a bar.
const WAITING: usize = 12;

fn bin(fake: &FakeForge, dir: &Path) -> Bin {
    std::fs::write(
        dir.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\nrequest_timeout_secs = 3\n",
    )
    .unwrap();
    Bin::new(dir).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
}

/// A forge that was down while an agent checkpointed `WAITING` times: the outbox holds them all.
async fn big_outbox() -> (FakeForge, u64, tempfile::TempDir) {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    fake.state().down = true;
    for i in 0..WAITING {
        let line = format!("checkpoint --agent w --session s --phase step_{i}");
        let out = bin(&fake, dir.path()).line(&line);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    fake.state().down = false;
    assert!(fake.comments_on(n).is_empty());
    (fake, n, dir)
}

/// `cmd` run under a pseudo-terminal (util-linux `script`): stderr, and stdout unless it is sent
/// to the file `stdout_to`, go to the terminal, whose whole transcript is returned.
#[cfg(target_os = "linux")]
fn in_terminal(cmd: &Command, stdout_to: Option<&Path>) -> Output {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut line = quote(&cmd.get_program().to_string_lossy());
    for arg in cmd.get_args() {
        line.push(' ');
        line.push_str(&quote(&arg.to_string_lossy()));
    }
    if let Some(file) = stdout_to {
        line.push_str(" > ");
        line.push_str(&quote(&file.to_string_lossy()));
    }
    let mut script = Command::new("script");
    script.args(["-qec", &line, "/dev/null"]).env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            script.env(k, v);
        }
    }
    if let Some(cwd) = cmd.get_current_dir() {
        script.current_dir(cwd);
    }
    script
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run script(1)")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flush_piped_to_a_file_or_in_json_mode_prints_no_progress() {
    let (fake, n, dir) = big_outbox().await;
    let out = bin(&fake, dir.path()).line("flush");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fake.comments_on(n).len(), WAITING, "the flush did its work");
    for (stream, text) in [("stdout", stdout(&out)), ("stderr", stderr(&out))] {
        assert!(!text.contains(TASK), "{stream} holds a bar: {text:?}");
        assert!(
            !text.contains('\r') && !text.contains('\x1b'),
            "{stream}: {text:?}"
        );
    }
    assert!(stdout(&out).starts_with(&format!("flushed {WAITING} record(s)")));

    let (fake, n, dir) = big_outbox().await;
    let out = bin(&fake, dir.path()).line("flush --json");
    let report = parse_ok(&words("flush --json"), &out);
    assert_eq!(report["posted"].as_array().unwrap().len(), WAITING);
    assert_eq!(fake.comments_on(n).len(), WAITING);
    assert_eq!(stderr(&out), "", "nothing but the JSON document");
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_big_flush_on_a_terminal_shows_a_bar_on_stderr_but_not_in_json_mode() {
    let (fake, n, dir) = big_outbox().await;
    // indicatif draws nothing when TERM is unset or dumb, as a terminal user would expect.
    let term = |b: Bin| b.env("TERM", "xterm");
    let report = dir.path().join("report.txt");
    let shown = in_terminal(
        &term(bin(&fake, dir.path())).command(&words("flush")),
        Some(&report),
    );
    let transcript = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{transcript}");
    assert_eq!(fake.comments_on(n).len(), WAITING);
    assert!(
        transcript.contains(TASK),
        "no bar on a terminal: {transcript:?}"
    );
    // The bar is on stderr only: stdout (a file here) holds the report alone.
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(
        report.starts_with(&format!("flushed {WAITING} record(s)")),
        "{report:?}"
    );
    assert_eq!(report.lines().count(), 1, "{report:?}");
    assert!(
        !report.contains(TASK) && !report.contains('\x1b'),
        "{report:?}"
    );

    let (fake, n, dir) = big_outbox().await;
    let json = in_terminal(
        &term(bin(&fake, dir.path())).command(&words("flush --json")),
        None,
    );
    let transcript = String::from_utf8_lossy(&json.stdout);
    assert!(json.status.success(), "{transcript}");
    assert_eq!(fake.comments_on(n).len(), WAITING);
    assert!(
        !transcript.contains(TASK),
        "a bar in --json mode: {transcript:?}"
    );
    let doc: serde_json::Value = serde_json::from_str(transcript.trim()).unwrap_or_else(|e| {
        panic!("the terminal shows only the JSON document ({e}): {transcript:?}")
    });
    assert_eq!(doc["posted"].as_array().unwrap().len(), WAITING);

    let (fake, n, dir) = big_outbox().await;
    let quiet = in_terminal(
        &term(bin(&fake, dir.path())).command(&words("flush --quiet")),
        None,
    );
    let transcript = String::from_utf8_lossy(&quiet.stdout);
    assert!(quiet.status.success(), "{transcript}");
    assert_eq!(fake.comments_on(n).len(), WAITING);
    assert!(
        !transcript.contains(TASK),
        "a bar with --quiet: {transcript:?}"
    );
}
