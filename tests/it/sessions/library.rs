//! Sessions through the library, on both stores: `Client::end` with each reason, an intent
//! across a client that dies before confirming it, compare-and-set refused and accepted, two
//! clients continuing from one resume (the lineage each client remembers, with no `--parent`),
//! and the lineage's cost: no request beyond a plain save once the client knows its session.

use crate::fake_forge;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::report::{StatusPolicy, Verdict};
use forgestate::scan::Filter;
use forgestate::{Category, Client, Write};
use serde_json::{Value, json};

use fake_forge::{BOT_TOKEN, FakeForge};

/// A store, and a way to open a new client on it (a new process, as far as memory goes).
struct Store {
    dir: tempfile::TempDir,
    fake: Option<FakeForge>,
}

impl Store {
    async fn both() -> [Store; 2] {
        let forge = FakeForge::start().await;
        fake_forge::session(&forge);
        [
            Store {
                dir: tempfile::tempdir().unwrap(),
                fake: None,
            },
            Store {
                dir: tempfile::tempdir().unwrap(),
                fake: Some(forge),
            },
        ]
    }

    /// A fresh client: it remembers nothing of earlier clients.
    async fn client(&self) -> Client<AnyThread> {
        match &self.fake {
            None => Client::local_as(self.dir.path().join("st"), "me").unwrap(),
            Some(fake) => {
                // Its own cache directory, inside the store's temporary directory.
                let own = self.dir.path().join(forgestate::format::new_record_id());
                fake_forge::client(fake, BOT_TOKEN, &own).build().unwrap()
            }
        }
    }

    async fn requests(&self) -> usize {
        match &self.fake {
            Some(fake) => fake.requests().await.len(),
            None => 0,
        }
    }
}

fn checkpoint(phase: &str, data: Value) -> Record {
    Record::checkpoint("w", "s", phase, data).unwrap()
}

async fn saved_id(client: &Client<AnyThread>, record: Record, write: Write) -> String {
    let posted = client.save_as(record, write).await.posted().unwrap();
    posted.id.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_record_names_its_parent_at_no_extra_request() {
    for store in Store::both().await {
        let client = store.client().await;
        let first = saved_id(&client, checkpoint("a", json!({})), Write::default()).await;
        let before = store.requests().await;
        let second = client
            .save_as(checkpoint("b", json!({})), Write::default())
            .await
            .posted()
            .unwrap();
        let lineage_cost = store.requests().await - before;
        assert_eq!(second.record.parent.as_deref(), Some(first.as_str()));
        let before = store.requests().await;
        let plain = client
            .save(checkpoint("c", json!({})))
            .await
            .posted()
            .unwrap();
        let plain_cost = store.requests().await - before;
        assert_eq!(
            lineage_cost, plain_cost,
            "the steady state reads nothing more"
        );
        assert_eq!(
            plain.record.parent, second.id,
            "a plain save continues the chain too"
        );
        // A new client (a new process) knows nothing: it names no parent until it resumes.
        let fresh = store.client().await;
        let health = || Record::health("w", "s", "Active", json!({}), None).unwrap();
        let orphan = fresh
            .save_as(health(), Write::default())
            .await
            .posted()
            .unwrap();
        assert_eq!(orphan.record.parent, None);
        let other = store.client().await;
        other.resume("w", "s").await.unwrap();
        let next = other
            .save_as(health(), Write::default())
            .await
            .posted()
            .unwrap();
        assert_eq!(next.record.parent, orphan.id, "what its resume returned");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_clients_resuming_the_same_record_conflict() {
    for store in Store::both().await {
        let first = store.client().await;
        let root = saved_id(&first, checkpoint("a", json!({"n": 1})), Write::default()).await;
        let (one, two) = (store.client().await, store.client().await);
        for c in [&one, &two] {
            let resumed = c.resume("w", "s").await.unwrap();
            assert_eq!(resumed.session.latest_id.as_deref(), Some(root.as_str()));
        }
        let a = saved_id(&one, checkpoint("b1", json!({})), Write::default()).await;
        let b = saved_id(&two, checkpoint("b2", json!({})), Write::default()).await;
        let resumed = one.resume("w", "s").await.unwrap();
        let conflict = &resumed.session.conflicts[0];
        assert_eq!(conflict.parent, root);
        let ids: Vec<_> = conflict
            .records
            .iter()
            .filter_map(|r| r.id.clone())
            .collect();
        assert_eq!(ids, [a.clone(), b.clone()]);
        assert!(
            resumed
                .warnings
                .iter()
                .any(|w| w.contains(&a) && w.contains(&b)),
            "{:?}",
            resumed.warnings
        );
        let history = one
            .history(&forgestate::HistoryQuery::new("s"))
            .await
            .unwrap();
        assert_eq!(history.conflicts.len(), 1);
        let status = one
            .status(&Filter::default(), &StatusPolicy::default())
            .await
            .unwrap();
        assert_eq!(status.rows[0].verdict, Verdict::Conflicted);
        // Compare-and-set would have stopped the second writer.
        let refused = two
            .save_as(
                checkpoint("c", json!({})),
                Write {
                    if_latest: Some(a.clone()),
                    ..Write::default()
                },
            )
            .await
            .posted()
            .unwrap_err();
        assert_eq!(refused.category(), Category::Conflict);
        assert!(refused.to_string().contains(&b), "{refused}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_intent_outlives_the_client_that_wrote_it() {
    for store in Store::both().await {
        {
            let dying = store.client().await;
            saved_id(
                &dying,
                checkpoint("a", json!({"branch": "b"})),
                Write::default(),
            )
            .await;
            let intent = checkpoint("a", json!({}))
                .with_intent("create_pr", json!({"branch": "b"}))
                .unwrap();
            let merged = Write {
                merge: true,
                ..Write::default()
            };
            saved_id(&dying, intent, merged).await;
        }
        let next = store.client().await;
        let resumed = next.resume("w", "s").await.unwrap();
        let pending = resumed.session.pending_intent.clone().unwrap();
        assert_eq!(pending.name, "create_pr");
        assert_eq!(pending.data, json!({"branch": "b"}));
        assert_eq!(resumed.resume.data, json!({"branch": "b"}), "merged");
        saved_id(
            &next,
            checkpoint("pr_created", json!({"pr": 7})),
            Write::default(),
        )
        .await;
        let after = next.resume("w", "s").await.unwrap();
        assert!(after.session.pending_intent.is_none());
        assert_eq!(
            after.resume.data,
            json!({"pr": 7}),
            "a snapshot without merge"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn end_with_each_reason() {
    for store in Store::both().await {
        let client = store.client().await;
        for reason in forgestate::format::END_REASONS {
            let session = format!("s-{reason}");
            let cp = Record::checkpoint("w", &session, "a", json!({"k": 1})).unwrap();
            saved_id(&client, cp, Write::default()).await;
            let end = client
                .end("w", &session, reason, Some("why"))
                .await
                .posted()
                .unwrap();
            let resumed = store.client().await.resume("w", &session).await.unwrap();
            let ended = resumed.session.ended.unwrap();
            assert_eq!(
                (ended.reason.as_str(), ended.note.as_deref()),
                (reason, Some("why"))
            );
            assert_eq!(ended.id, end.id);
            assert_eq!(resumed.resume.data, json!({"k": 1}));
        }
        let bad = client.end("w", "s", "finished", None).await.posted();
        assert!(bad.unwrap_err().to_string().contains("user_stop"));
    }
}
