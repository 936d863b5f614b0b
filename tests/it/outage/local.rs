//! The local store has no outage: `--wait` and `FORGESTATE_WAIT` change nothing there, and its
//! answers are never offline.

use crate::common::cli::{Bin, parse_ok, stderr, store_args};

#[test]
fn the_local_store_takes_the_wait_flag_and_never_answers_offline() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = Bin::new(d).env("FORGESTATE_WAIT", "250ms");
    let save = store_args(
        d,
        &[
            "--wait",
            "100ms",
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "s",
            "--phase",
            "p",
            "--json",
        ],
    );
    let out = bin.run(&save);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(parse_ok(&save, &out)["spooled"].is_null());
    for verb in ["resume", "latest"] {
        let read = store_args(
            d,
            &[
                "--wait",
                "100ms",
                verb,
                "--agent",
                "w",
                "--session",
                "s",
                "--json",
            ],
        );
        let out = bin.run(&read);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = parse_ok(&read, &out);
        assert_eq!(doc["offline"], false, "{verb}: {doc}");
    }
    let list = store_args(d, &["list", "--json"]);
    let doc = parse_ok(&list, &bin.run(&list));
    assert_eq!(doc["offline"], false, "{doc}");
    assert_eq!(doc["records"][0]["phase"], "p", "{doc}");
    let status = store_args(d, &["status", "--json"]);
    let doc = parse_ok(&status, &bin.run(&status));
    assert_eq!(doc["offline"], false, "{doc}");
}
