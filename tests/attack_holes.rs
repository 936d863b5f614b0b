//! Holes found by attacking the supervision and operations verbs as a hostile user would, each
//! pinned by a test that failed before its fix: a `--context-file` that is a FIFO with no writer
//! (which hung `checkpoint` and `resume` forever), ...

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::cli::{Bin, stderr, words};

/// Runs `line` in `dir` on the local store `dir/st`, killing it if it is still running after a
/// minute (a hang is the bug under test; a correct run takes well under a second).
fn run_guarded(dir: &Path, line: &str) -> Output {
    let mut args = vec!["--store".to_string(), dir.join("st").display().to_string()];
    args.extend(words(line));
    let mut child = Bin::new(dir)
        .command(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("{line}: still running after a minute: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[cfg(unix)]
#[test]
fn a_context_file_that_is_a_fifo_or_a_device_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("STATUS.fifo");
    mkfifo(&fifo);
    let posted = run_guarded(d, "checkpoint --agent w --session s --phase p");
    assert!(posted.status.success(), "{}", stderr(&posted));
    for (verb, path) in [
        (
            "checkpoint --agent w --session s --phase q",
            fifo.display().to_string(),
        ),
        ("resume --agent w --session s", fifo.display().to_string()),
        (
            "checkpoint --agent w --session s --phase q",
            "/dev/zero".to_string(),
        ),
    ] {
        let out = run_guarded(d, &format!("{verb} --context-file {path}"));
        assert_eq!(
            out.status.code(),
            Some(74),
            "{verb} {path}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("is not a regular file"),
            "{verb} {path}: {}",
            stderr(&out)
        );
    }
    let resume = run_guarded(d, "resume --agent w --session s --json");
    let answer: serde_json::Value = serde_json::from_slice(&resume.stdout).unwrap();
    assert_eq!(answer["phase"], "p", "a refused checkpoint wrote nothing");
}
