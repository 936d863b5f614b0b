//! End-to-end: two local stores merged by concatenating their thread files lose no agent.

use crate::common;
use common::cli::{ok_json, run_in, stderr, words};

#[test]
fn a_merged_store_keeps_both_agents_and_the_next_write_takes_a_new_id() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (store, agent) in [("a", "a"), ("b", "b")] {
        ok_json(
            root,
            &format!(
                "--store {store} checkpoint --agent {agent} --session s --phase {agent}1 --json"
            ),
        );
    }
    std::fs::create_dir(root.join("m")).unwrap();
    let merged = ["a", "b"]
        .map(|s| std::fs::read_to_string(root.join(s).join("thread.jsonl")).unwrap())
        .concat();
    std::fs::write(root.join("m/thread.jsonl"), merged).unwrap();

    for agent in ["a", "b"] {
        let line = format!("--store m resume --agent {agent} --session s --json");
        let out = run_in(root, &words(&line), None);
        assert!(out.status.success(), "{}", stderr(&out));
        let resume: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(resume["fresh_start"], false, "{agent}: {resume}");
        assert_eq!(resume["phase"], format!("{agent}1"));
        assert!(
            stderr(&out).contains("line 2 repeats id 1 of line 1, read as id 2"),
            "the reader says what it did: {}",
            stderr(&out)
        );
    }
    let list = ok_json(root, "--store m list --json");
    let agents: Vec<&str> = list["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["agent"].as_str())
        .collect();
    assert_eq!(agents, ["a", "b"], "{list}");
    let posted = ok_json(
        root,
        "--store m checkpoint --agent c --session s --phase c1 --json",
    );
    assert_eq!(
        posted["comment_id"], 3,
        "after the id the repeated line is read under"
    );
}
