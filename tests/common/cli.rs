//! Running the real `forgestate` binary from tests.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Splits a command line on spaces (for arguments that contain none).
pub fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// Runs the binary in `cwd` with a clean environment plus `env`, optionally feeding stdin.
pub fn run_with(cwd: &Path, args: &[String], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_forgestate"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("HOME", cwd)
        .env("USER", "tester")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn forgestate");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).expect("write stdin");
    }
    drop(input);
    child.wait_with_output().expect("wait for forgestate")
}

pub fn run_in(cwd: &Path, args: &[String], stdin: Option<&str>) -> Output {
    run_with(cwd, args, &[], stdin)
}

/// Runs a command that must succeed and print one JSON document.
pub fn ok_json(cwd: &Path, line: &str) -> Value {
    parse_ok(&words(line), &run_in(cwd, &words(line), None))
}

pub fn parse_ok(args: &[String], out: &Output) -> Value {
    assert!(out.status.success(), "{args:?}: {}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
