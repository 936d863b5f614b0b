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
