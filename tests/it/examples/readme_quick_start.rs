//! The README's quick start, run as a newcomer runs it: its first `sh` block, with the built
//! binary in place of `cargo run --release --`, under bash, in a fresh home. It answers the
//! resume point the README promises and leaves nothing in the user's own store.

use std::path::Path;
use std::process::Command;

use crate::common;

/// The first `sh` block after `## Quick start`, its lines joined as the shell joins them.
fn quick_start() -> String {
    let text = common::read_text(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let (_, after) = text
        .split_once("## Quick start")
        .expect("the README has a quick start");
    let (_, block) = after.split_once("```sh\n").expect("with an sh block");
    let (block, _) = block.split_once("```").expect("that closes");
    block.to_string()
}

#[test]
fn the_quick_start_resumes_and_leaves_no_trace() {
    let script = quick_start();
    assert!(
        script.matches("cargo run --release --").count() == 2 && script.lines().count() >= 2,
        "one command, over more than one line, that builds and runs twice: {script}"
    );
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let bin = env!("CARGO_BIN_EXE_forgestate");
    let script = script.replace("cargo run --release --", &format!("'{bin}'"));
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(&home)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("USER", "newcomer")
        .env("TMPDIR", &tmp)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("resume point: phase_2_continue"),
        "{stdout}"
    );
    assert!(
        stdout.contains("feat/issue-42"),
        "with the saved data: {stdout}"
    );
    let left: Vec<_> = common::files_under(&home);
    assert!(
        left.is_empty(),
        "nothing written in the home directory: {left:?}"
    );
    let stores: Vec<_> = common::files_under(&tmp)
        .into_iter()
        .filter(|p| p.ends_with(forgestate::store::THREAD_FILE))
        .collect();
    assert_eq!(
        stores.len(),
        1,
        "the record is in the throwaway store: {stores:?}"
    );
}
