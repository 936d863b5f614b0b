//! A torn last line, then an append that seals it: every read after says what the file holds
//! now, naming the file's own line, warm (through the read cache) or cold alike, never the torn
//! line the last full read saw.

use std::io::Write;

use crate::common::cli::{Bin, stderr, words};

#[test]
fn warm_reads_name_the_sealed_line_as_cold_reads_do() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let run = |args: &str| bin.run(&words(args));
    for phase in ["p1", "p2"] {
        let out = run(&format!(
            "--store st checkpoint --agent w --session s --phase {phase}"
        ));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // A warm read cache, then a write cut short by a crash.
    run("--store st resume --agent w --session s");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("st/thread.jsonl"))
        .unwrap();
    file.write_all(br#"{"id": 99, "bro"#).unwrap();
    drop(file);
    for _ in 0..2 {
        let err = stderr(&run("--store st resume --agent w --session s"));
        assert!(err.contains("ignored a torn last line"), "{err}");
    }
    let out = run("--store st checkpoint --agent w --session s --phase p3");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for args in [
        "--store st resume --agent w --session s",
        "--store st resume --agent w --session s",
        "--store st list",
        "--store st resume --agent w --session s --refresh",
    ] {
        let err = stderr(&run(args));
        assert!(err.contains("skipped corrupt line 3 "), "{args}: {err}");
        assert!(!err.contains("torn"), "{args}: {err}");
        assert!(!err.contains("corrupt line 1 "), "{args}: {err}");
    }
}
