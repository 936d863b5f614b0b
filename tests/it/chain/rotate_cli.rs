//! `forgestate rotate` and automatic rotation, through the real binary against the fake forge.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::Output;

use common::cli::{Bin, parse_ok, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::config::DEFAULT_TITLE as TITLE;

fn forgestate(fake: &FakeForge, dir: &Path, line: &str) -> Output {
    Bin::new(dir)
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .env("XDG_CACHE_HOME", dir.join("cache").display().to_string())
        .line(line)
}

fn closed(fake: &FakeForge, n: u64) -> bool {
    fake.state()
        .issues
        .iter()
        .any(|i| i.number == n && i.closed)
}

#[tokio::test(flavor = "multi_thread")]
async fn rotate_says_what_it_did_and_a_second_run_does_nothing() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (agent, phase) in [("w1", "clone_complete"), ("w2", "pr_created")] {
        let line = format!("checkpoint --agent {agent} --session s1 --phase {phase} --json");
        parse_ok(&words(&line), &forgestate(&fake, d, &line));
    }
    let out = forgestate(&fake, d, "rotate");
    assert!(out.status.success(), "{}", stderr(&out));
    let new = fake.open_issues_titled(TITLE)[0];
    assert!(
        stdout(&out).starts_with(&format!(
            "session issue #{old} rotated to #{new} (created): 2 record(s) carried; old issue closed\n"
        )),
        "{}",
        stdout(&out)
    );
    assert!(closed(&fake, old));
    let again = parse_ok(
        &words("rotate --json"),
        &forgestate(&fake, d, "rotate --json"),
    );
    assert_eq!(again["from"], new);
    assert_eq!(again["to"], serde_json::Value::Null);
    assert!(
        again["note"]
            .as_str()
            .unwrap()
            .contains("nothing to rotate")
    );
    let resumed = parse_ok(
        &words("resume --agent w2 --session s1 --json"),
        &forgestate(&fake, d, "resume --agent w2 --session s1 --json"),
    );
    assert_eq!(resumed["phase"], "pr_created");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_checkpoint_past_rotate_after_rotates_the_issue() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("rotating.toml");
    std::fs::write(&config, "[forge]\nrotate_after = 2\nrecheck_secs = 0\n").unwrap();
    let mut last = String::new();
    for phase in ["p1", "p2", "p3", "p4"] {
        let line = format!(
            "checkpoint --agent w --session s1 --phase {phase} --config {}",
            config.display()
        );
        let out = forgestate(&fake, d, &line);
        assert!(out.status.success(), "{}", stderr(&out));
        last = stderr(&out);
        if closed(&fake, old) {
            break;
        }
    }
    assert!(closed(&fake, old), "rotated once over the limit");
    assert!(
        last.contains(&format!("session issue #{old} rotated to #")),
        "{last}"
    );
    let new = fake.open_issues_titled(TITLE);
    assert_eq!(new.len(), 1);
    assert_eq!(
        fake.comments_on(new[0]).len(),
        1,
        "the newest checkpoint carried"
    );
}
