//! Reading through the outbox while another process flushes it: a store that flushes between
//! the reader's two looks (a `Thread` of the test's own, which only the crate may implement).

use chrono::{DateTime, Utc};
use serde_json::json;

use super::{DrainPolicy, Outbox};
use crate::Client;
use crate::format::{Record, Renderer};
use crate::store::{Comment, Effort, Init, Listing, LocalThread, StoreError, Thread, sealed};

fn cp(phase: &str) -> Record {
    Record::checkpoint("implementation-worker", "s1", phase, json!({"step": phase}))
        .expect("a valid checkpoint")
}

/// The local store standing in for the forge; right after each listing, another process
/// flushes the whole outbox into it.
struct FlushDuringList {
    inner: LocalThread,
    outbox: Outbox,
}

impl sealed::Sealed for FlushDuringList {}

impl Thread for FlushDuringList {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    async fn append_with(&self, body: &str, e: Effort) -> Result<Comment, StoreError> {
        self.inner.append_with(body, e).await
    }
    async fn list_with(
        &self,
        since: Option<DateTime<Utc>>,
        e: Effort,
    ) -> Result<Listing, StoreError> {
        // The thread is read, and right after that another process flushes everything: a
        // reader that looks at the outbox only now finds it empty.
        let listing = self.inner.list_with(since, e).await?;
        for entry in self.outbox.pending().expect("the outbox lists") {
            self.inner.append(&entry.body).await?;
            self.outbox.remove(&entry).expect("the entry goes");
        }
        Ok(listing)
    }
    async fn init(&self) -> Result<Init, StoreError> {
        self.inner.init().await
    }
    async fn whoami(&self) -> Result<String, StoreError> {
        self.inner.whoami().await
    }
    fn trusts_everyone(&self) -> bool {
        true
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reads_see_a_record_flushed_by_another_process_between_the_two_reads() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let outbox = Outbox::new(dir.path().join("outbox"));
    let renderer = Renderer::embedded().expect("the embedded templates");
    let store = LocalThread::new(dir.path().join("store"), "me");
    let old = renderer.render(&cp("old")).expect("renders");
    store.append(&old).await.expect("appends");
    let new = renderer.render(&cp("new")).expect("renders");
    outbox.push(&new).expect("spools");
    let thread = FlushDuringList {
        inner: store,
        outbox: outbox.clone(),
    };
    // The drain is skipped (backing off), as when the forge failed a moment ago.
    outbox.record_failure("503");
    let client = Client::new(thread, renderer, Default::default())
        .with_outbox(outbox, DrainPolicy::default());
    let answer = client
        .resume("implementation-worker", "s1")
        .await
        .expect("resumes");
    assert_eq!(
        answer.resume.phase, "new",
        "a record flushed between the two reads is still seen"
    );
}
