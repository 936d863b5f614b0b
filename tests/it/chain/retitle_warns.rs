//! Hole 12 (retitle half): a person retitles the head. The machine that keeps using it (its
//! number cached) says so on its next read, once, as docs/forge.md promises, not only a machine
//! that discovers the thread afresh.

use crate::common::cli::{Bin, stderr, words};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};

const WARNING: &str = "no longer has the session title";

#[tokio::test(flavor = "multi_thread")]
async fn the_machine_using_a_retitled_head_warns_on_its_next_read() {
    let fake = FakeForge::start().await;
    let machine = tempfile::tempdir().unwrap();
    let run = |line: &str| {
        let out = Bin::new(machine.path())
            .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
            .run(&words(line));
        assert!(out.status.success(), "{line}: {}", stderr(&out));
        stderr(&out)
    };
    let first = run("checkpoint --agent a --session s --phase p1");
    assert!(!first.contains(WARNING), "{first}");
    fake.retitle(1, "Agent state (please do not edit)");
    let err = run("resume --agent a --session s --json");
    assert_eq!(err.matches(WARNING).count(), 1, "warned once: {err}");
    assert!(err.contains("#1"), "{err}");
}
