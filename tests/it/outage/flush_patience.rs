//! `flush` has nothing to answer without the forge: it waits its patience, not the wait budget,
//! and the documents say so (forge.md once said `--wait 5m` rode out a longer outage; the code,
//! failure-handling.md and cli.md have `flush` under the patience).

use std::time::Duration;

use super::{json_ok, spooled, timed};
use crate::common::cli::stderr;
use crate::fake_forge::outage::Mode;
use crate::fake_forge::{FakeForge, session};

/// The paragraph of `doc` (blank-line separated) holding `needle`.
fn paragraph(doc: &str, needle: &str) -> String {
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(doc))
        .unwrap();
    text.split("\n\n")
        .find(|p| p.contains(needle))
        .unwrap_or_else(|| panic!("{doc} mentions {needle:?}"))
        .to_string()
}

#[test]
fn the_documents_put_flush_under_the_patience() {
    let forge = paragraph("docs/forge.md", "`forgestate flush` ignores the backoff");
    let start = forge
        .find("`forgestate flush` ignores the backoff")
        .unwrap();
    let flush = &forge[start..];
    assert!(flush.contains("`--patience"), "{flush}");
    assert!(!flush.contains("`--wait"), "{flush}");
    let cli = paragraph(
        "docs/cli.md",
        "Posts the records waiting in this machine's outbox",
    );
    assert!(cli.contains("`--patience`"), "{cli}");
    let rule = paragraph("docs/failure-handling.md", "**The wait rule.**");
    assert!(rule.contains("`flush`) waits longer, up to its"), "{rule}");
}

#[tokio::test(flavor = "multi_thread")]
async fn flush_waits_its_patience_not_the_wait_budget() {
    let fake = FakeForge::start().await;
    session(&fake);
    let front = fake.front().await;
    let uri = front.uri();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    front.set(Mode::Silent);
    let (saved, _) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase built --wait 1s --json",
    );
    assert!(saved["spooled"].is_string(), "{saved}");
    // The forge is back but its comment lists answer 2.5 s late: past a 1 s wait budget,
    // within the patience. `flush --wait 1s` still waits for them, and posts.
    front.set(Mode::SlowList(Duration::from_millis(2500)));
    let (out, _) = timed(&uri, d, &[], "flush --wait 1s --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(spooled(d).is_empty(), "{}", stderr(&out));
}
