//! The run-time choice of store: every backend the CLI can open, behind one [`Thread`].
//!
//! New backends become new variants here; the verbs and the format never change.

use chrono::{DateTime, Utc};

use crate::forge::ForgeThread;
use crate::store::{
    AppendGuard, Comment, Cursor, Deleted, Delta, Effort, Init, Keep, Listing, LocalThread,
    Predecessor, StoreError, Thread,
};

/// The store a client runs over, chosen at run time: local or forge.
#[derive(Debug)]
pub enum AnyThread {
    /// The local JSONL store.
    Local(LocalThread),
    /// The session issue on a Forgejo/Gitea forge.
    Forge(Box<ForgeThread>),
}

impl AnyThread {
    /// The forge thread, when this is one (rotation and other session-issue operations).
    pub fn forge(&self) -> Option<&ForgeThread> {
        match self {
            AnyThread::Forge(t) => Some(t),
            AnyThread::Local(_) => None,
        }
    }
}

impl crate::store::sealed::Sealed for AnyThread {}

/// `$e` on whichever store `$this` holds, named `$t`.
macro_rules! each {
    ($this:expr, $t:ident => $e:expr) => {
        match $this {
            AnyThread::Local($t) => $e,
            AnyThread::Forge($t) => $e,
        }
    };
}

impl Thread for AnyThread {
    fn describe(&self) -> String {
        each!(self, t => t.describe())
    }

    async fn append_with(&self, body: &str, effort: Effort) -> Result<Comment, StoreError> {
        each!(self, t => t.append_with(body, effort).await)
    }

    async fn append_guarded(
        &self,
        body: &str,
        after: u64,
        guard: AppendGuard,
    ) -> Result<Option<Comment>, StoreError> {
        each!(self, t => t.append_guarded(body, after, guard).await)
    }

    async fn list_with(
        &self,
        since: Option<DateTime<Utc>>,
        effort: Effort,
    ) -> Result<Listing, StoreError> {
        each!(self, t => t.list_with(since, effort).await)
    }

    async fn list_delta(
        &self,
        cursor: Option<&Cursor>,
        effort: Effort,
        keep: &Keep,
    ) -> Result<Delta, StoreError> {
        each!(self, t => t.list_delta(cursor, effort, keep).await)
    }

    async fn list_keeping(
        &self,
        since: Option<DateTime<Utc>>,
        effort: Effort,
        keep: &Keep,
    ) -> Result<Listing, StoreError> {
        each!(self, t => t.list_keeping(since, effort, keep).await)
    }

    async fn init(&self) -> Result<Init, StoreError> {
        each!(self, t => t.init().await)
    }

    async fn whoami(&self) -> Result<String, StoreError> {
        each!(self, t => t.whoami().await)
    }

    fn generation(&self) -> Option<String> {
        each!(self, t => t.generation())
    }

    fn comment_count(&self) -> Option<crate::store::CommentCount> {
        each!(self, t => t.comment_count())
    }

    fn now(&self) -> DateTime<Utc> {
        each!(self, t => t.now())
    }

    async fn delete(&self, ids: &[u64]) -> Result<Deleted, StoreError> {
        each!(self, t => t.delete(ids).await)
    }

    fn trusts_everyone(&self) -> bool {
        each!(self, t => t.trusts_everyone())
    }

    fn keeps_an_outbox(&self) -> bool {
        each!(self, t => t.keeps_an_outbox())
    }

    fn begin_command(&self) {
        each!(self, t => t.begin_command())
    }

    fn without_answer(&self, why: Option<&'static str>) {
        each!(self, t => t.without_answer(why))
    }

    async fn predecessor(&self, hops: usize) -> Result<Option<Predecessor>, StoreError> {
        each!(self, t => t.predecessor(hops).await)
    }

    async fn prepare_write(&self) -> Result<(), StoreError> {
        each!(self, t => t.prepare_write().await)
    }
}
