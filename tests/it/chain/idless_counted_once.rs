//! Issue #42, medium 6: a record of seed 003's client (no `Id:`) counts once across its copies
//! (a rotation carries it with `Carried-From:` and `Posted-At:`), by the identity rule the
//! import uses (same kind, agent, session, time and payload), in every read: `list`,
//! `list --all`, `history`, prune's count and the read cache; on the forge and on the local
//! store.

use crate::fake_forge::{FakeForge, bot, session};
use forgestate::client::prune::{PruneOptions, plan};
use forgestate::format::{Renderer, parse};
use forgestate::scan::Filter;
use forgestate::store::LocalThread;
use forgestate::{Client, HistoryQuery, ListQuery};

/// A checkpoint as the seed's Python agents write it: version 1.0, no `Id`, unclosed fence.
const SEED_BODY: &str = "[CHECKPOINT] seed-agent\nVersion: 1.0\nPhase: clone_complete\n\
    Session: s9\nTime: 2026-11-29T08:40:58.123456Z\n\nState Data:\n```json\n{\n  \"k\": 1\n}\n\n\
    ---\n\nAutomated by CleverAgents Bot Agent: seed-agent\n";

fn seed_filter() -> Filter {
    Filter {
        agent: Some("seed-agent".into()),
        ..Filter::default()
    }
}

/// What every read of `c` counts of the seed's record: `list`, `list --all`, `history`, and the
/// records prune's "keep 1" would delete.
async fn counts<T: forgestate::store::Thread>(c: &Client<T>) -> [usize; 4] {
    let listed = c.list(&seed_filter(), None).await.unwrap().entries.len();
    let all = c
        .query(&ListQuery {
            whole_history: true,
            filter: seed_filter(),
            ..Default::default()
        })
        .await
        .unwrap()
        .entries
        .len();
    let history = c
        .history(&HistoryQuery::new("s9"))
        .await
        .unwrap()
        .records
        .len();
    let options = PruneOptions {
        keep: 1,
        agent: Some("seed-agent".into()),
        session: None,
        ids: Vec::new(),
    };
    let doomed = plan(c, &options).await.unwrap().delete.len();
    [listed, all, history, doomed]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_seed_record_carried_by_a_rotation_counts_once_in_every_read() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    fake.add_comment(old, "ca-bot", SEED_BODY);
    let rotated = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    assert_eq!(rotated.carried, 1, "{rotated:?}");
    let new = rotated.to.unwrap();
    assert_eq!(
        fake.comments_on(new).len(),
        1,
        "the copy is on the new head"
    );

    let fresh = tempfile::tempdir().unwrap();
    assert_eq!(counts(&bot(&fake, fresh.path())).await, [1, 1, 1, 0]);
    // The same machine again: its read cache (the mirror) answers now.
    assert_eq!(counts(&bot(&fake, fresh.path())).await, [1, 1, 1, 0]);
}

#[tokio::test]
async fn a_seed_record_and_its_copy_count_once_on_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path(), "ci-bot");
    store.append_blocking(SEED_BODY).unwrap();
    let original = parse(SEED_BODY).unwrap();
    let at = original.time;
    let copy = original.carried(1).first_posted_at(at);
    let body = Renderer::embedded().unwrap().render(&copy).unwrap();
    store.append_blocking(&body).unwrap();

    let c = Client::local_as(dir.path(), "ci-bot").unwrap();
    assert_eq!(counts(&c).await, [1, 1, 1, 0]);
}
