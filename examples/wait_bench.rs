//! How long the `forgestate` binary takes, process start included, on a forge that is slow or
//! down (issue #42's wait rule): for each mode of the test suite's fake forge (behind its outage
//! front), the wall time of a warm `checkpoint` (this machine has an outbox), a warm `resume`
//! (it has a read cache), a cold `resume` (a machine that never read the thread) and `rotate`,
//! with the wait budget at 3 s and the patience at its default (60 s), then with the patience
//! cut to the budget (3 s). Each command runs as an agent runs it, with no outage marker left by
//! the one before (each is measured as the first command to meet the forge so). Prints a
//! markdown table and what each command answered; asserts nothing.
//!
//! Build the binary first, then run the example with the same profile:
//! `cargo build --release && cargo run --release --features dev-examples --example wait_bench`
//! (add `-- quick` to skip the outages where a patient command waits its whole patience).

// The test suite's fake, of which this example uses a part.
#[path = "../tests/it/fake_forge/mod.rs"]
#[allow(dead_code, unused_imports)]
mod fake_forge;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_forge::outage::{Mode, OUTAGES};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};

/// How late the slow list answers (the 4.5 s: past the budget, within the patience).
const LATE: Duration = Duration::from_millis(4500);

/// The `forgestate` binary beside this example's directory (`target/<profile>/forgestate`).
fn binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("forgestate");
    bin.is_file().then_some(bin)
}

/// One command in `dir` against `uri`: its wall time, exit code and what it answered.
fn run(bin: &Path, uri: &str, dir: &Path, patience: &str, line: &str) -> (Duration, String) {
    // Every command meets the forge first: no outage marker from the one before.
    remove_markers(&dir.join("state"));
    let started = Instant::now();
    let out = Command::new(bin)
        .args(["--patience", patience])
        .args(line.split_whitespace())
        .current_dir(dir)
        .env_clear()
        .env("HOME", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("FORGESTATE_URL", uri)
        .env("FORGESTATE_OWNER", OWNER)
        .env("FORGESTATE_REPO", REPO)
        .env("FORGESTATE_TOKEN", BOT_TOKEN)
        .env("FORGESTATE_WAIT", "3s")
        .stdin(Stdio::null())
        .output();
    let took = started.elapsed();
    let what = match out {
        Ok(out) => {
            let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let code = out.status.code().unwrap_or(-1);
            match (code, &answer) {
                (0, a) if a["spooled"].is_string() => "spooled".to_string(),
                (0, a) if a["posted"] == true => "posted".to_string(),
                (0, a) if a["offline"] == true => "offline".to_string(),
                (0, _) => "answered".to_string(),
                (code, _) => format!("exit {code}"),
            }
        }
        Err(e) => format!("did not run: {e}"),
    };
    (took, what)
}

/// Removes every outage marker under `dir`.
fn remove_markers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            remove_markers(&path);
        } else if path.file_name().is_some_and(|n| n == ".outage") {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The four commands on a fresh fake in `mode`, with this patience.
async fn measure(bin: &Path, mode: Mode, patience: &str) -> Vec<(Duration, String)> {
    let fake = FakeForge::start().await;
    session(&fake);
    let front = fake.front().await;
    let uri = front.uri();
    let warm = tempfile::tempdir().expect("temp dir");
    let cold = tempfile::tempdir().expect("temp dir");
    let json = "--json";
    let p = patience;
    let w = warm.path();
    run(
        bin,
        &uri,
        w,
        p,
        &format!("checkpoint --agent w --session s --phase planned {json}"),
    );
    run(bin, &uri, w, p, &format!("list --agent w {json}"));
    front.set(mode);
    let measured = vec![
        run(
            bin,
            &uri,
            w,
            p,
            &format!("checkpoint --agent w --session s --phase built {json}"),
        ),
        run(
            bin,
            &uri,
            w,
            p,
            &format!("resume --agent w --session s {json}"),
        ),
        run(
            bin,
            &uri,
            cold.path(),
            p,
            &format!("resume --agent w --session s {json}"),
        ),
        run(bin, &uri, w, p, &format!("rotate {json}")),
    ];
    front.set(Mode::Up);
    measured
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let Some(bin) = binary() else {
        eprintln!(
            "wait_bench: build the forgestate binary with the same profile first \
             (cargo build --release)"
        );
        return std::process::ExitCode::from(69);
    };
    let quick = std::env::args().nth(1).as_deref() == Some("quick");
    let mut modes: Vec<(Mode, &str)> = vec![(Mode::Up, "up (a healthy forge)")];
    modes.extend([
        (
            Mode::SlowList(LATE),
            "a comment list that starts answering 4.5 s late",
        ),
        (Mode::Dribble, "headers at once, then a dribbled body"),
        (Mode::Alternating { drop: false }, "every other request 503"),
        (
            Mode::Alternating { drop: true },
            "every other request dropped",
        ),
    ]);
    modes.extend(
        OUTAGES
            .into_iter()
            .filter(|(m, _)| !quick || *m != Mode::Silent),
    );
    println!("| forge | patience | warm checkpoint | warm resume | cold resume | rotate |");
    println!("|---|---|---|---|---|---|");
    for (mode, what) in modes {
        for patience in ["60s", "3s"] {
            let cells: Vec<String> = measure(&bin, mode, patience)
                .await
                .into_iter()
                .map(|(t, answer)| format!("{:.1} s ({answer})", t.as_secs_f64()))
                .collect();
            let shown = if patience == "60s" {
                "60 s (default)"
            } else {
                "3 s"
            };
            println!("| {what} | {shown} | {} |", cells.join(" | "));
        }
    }
    std::process::ExitCode::SUCCESS
}
