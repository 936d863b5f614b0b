//! Helpers for outbox tests: a checkpoint per phase, spooling one, and the phases a thread holds.

use std::path::PathBuf;

use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::{Client, Outcome};
use serde_json::json;

use super::FakeForge;

/// An implementation-worker checkpoint in session `s1` at `phase`.
pub fn cp(phase: &str) -> Record {
    Record::checkpoint("implementation-worker", "s1", phase, json!({"step": phase}))
        .expect("a valid checkpoint")
}

/// Saves a checkpoint at `phase` that must end up in the outbox; its entry's path.
pub async fn spool(c: &Client<AnyThread>, phase: &str) -> PathBuf {
    match c.save(cp(phase)).await {
        Outcome::Spooled { path, .. } => path,
        other => panic!("expected the record to be spooled, got {other:?}"),
    }
}

/// The phases of the records on `issue`, in thread order.
pub fn phases(fake: &FakeForge, issue: u64) -> Vec<String> {
    fake.comments_on(issue)
        .iter()
        .map(|c| {
            let r = forgestate::format::parse(&c.body).expect("only records are posted");
            r.phase().unwrap_or("").to_string()
        })
        .collect()
}
