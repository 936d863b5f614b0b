//! When the forge is back, the next command (a read: nothing waits for a `flush`) posts every
//! spooled record, once each and in order, whichever kind of outage it was.

use super::{json_ok, spooled};
use crate::fake_forge::outage::{Mode, OUTAGES};
use crate::fake_forge::{FakeForge, session};
use forgestate::format::parse;

#[tokio::test(flavor = "multi_thread")]
async fn the_first_command_after_an_outage_posts_the_backlog_in_order_once() {
    for (mode, what) in OUTAGES {
        let fake = FakeForge::start().await;
        let n = session(&fake);
        let front = fake.front().await;
        let uri = front.uri();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        front.set(mode);
        for phase in ["one", "two", "three"] {
            let line = format!("checkpoint --agent w --session s --phase {phase} --json");
            let (saved, _) = json_ok(&uri, d, &line);
            assert!(saved["spooled"].is_string(), "{what}: {saved}");
        }
        assert_eq!(spooled(d).len(), 3, "{what}");
        assert!(fake.comments_on(n).is_empty(), "{what}");

        front.set(Mode::Up);
        let (resume, _) = json_ok(&uri, d, "resume --agent w --session s --json");
        assert_eq!(resume["offline"], false, "{what}: {resume}");
        assert_eq!(resume["phase"], "three", "{what}: {resume}");
        assert_eq!(resume["pending"], false, "{what}: posted by this command");
        let phases = |fake: &FakeForge| -> Vec<String> {
            fake.comments_on(n)
                .iter()
                .map(|c| parse(&c.body).unwrap().phase().unwrap().to_string())
                .collect()
        };
        assert_eq!(phases(&fake), ["one", "two", "three"], "{what}: in order");
        assert!(spooled(d).is_empty(), "{what}");
        let marker = crate::common::files_under(&d.join("state/forgestate/outbox"))
            .into_iter()
            .any(|p| p.file_name().is_some_and(|f| f == ".outage"));
        assert!(!marker, "{what}: the forge answered, so the marker is gone");

        json_ok(&uri, d, "list --agent w --json");
        json_ok(
            &uri,
            d,
            "checkpoint --agent w --session s --phase four --json",
        );
        assert_eq!(
            phases(&fake),
            ["one", "two", "three", "four"],
            "{what}: once each"
        );
    }
}

/// The outage marker under `dir`, if any.
fn marker(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    crate::common::files_under(&dir.join("state/forgestate/outbox"))
        .into_iter()
        .find(|p| p.file_name().is_some_and(|f| f == ".outage"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forge_back_but_slow_after_an_outage_is_posted_to() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let front = fake.front().await;
    let uri = front.uri();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase one --json",
    );
    front.set(Mode::Unavailable);
    let (saved, _) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase two --json",
    );
    assert!(saved["spooled"].is_string(), "{saved}");
    assert!(marker(d).is_some(), "the outage left its marker");

    // The forge is back, answering each request 1.2 s late: past the 800 ms quick timeout.
    // It accepts the connection, so it gets the command's budget: 10 s here, room for the
    // drain's round trips (the listing for copies, the login, the backlog's post, this one).
    front.set(Mode::Up);
    fake.state().latency = std::time::Duration::from_millis(1200);
    let (saved, _) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase three --wait 10s --json",
    );
    assert_eq!(saved["posted"], true, "{saved}");
    assert!(spooled(d).is_empty(), "the backlog went first");
    assert!(
        marker(d).is_none(),
        "the forge answered: the marker is gone"
    );
    assert_eq!(fake.comments_on(n).len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_attempt_under_the_marker_does_not_renew_it() {
    let fake = FakeForge::start().await;
    session(&fake);
    let front = fake.front().await;
    let uri = front.uri();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase one --json",
    );
    front.set(Mode::Refusing);
    json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase two --json",
    );
    let path = marker(d).expect("the outage left its marker");
    // The marker as the outage left it 20 s ago: the next command's attempt fails, and the
    // marker keeps its age, so 30 s after the outage a command gets a whole budget again.
    let stamp = (chrono::Utc::now().timestamp() - 20).to_string();
    std::fs::write(&path, &stamp).unwrap();
    let (saved, _) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase three --json",
    );
    assert!(saved["spooled"].is_string(), "{saved}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), stamp);
}
