//! `init` on the client: the thread found or created, whom records are posted as, the machine's
//! writer made, and the drain of what the outbox holds.

use super::Client;
use crate::error::{Error, Result};
use crate::store::{Init, Thread};

impl<T: Thread> Client<T> {
    /// Finds or creates the session thread; answers it and the store's identity. It readies the
    /// machine to write, its writer included (a read never makes it: `writer.rs`), so the first
    /// checkpoints after it pay for neither.
    pub async fn init(&self) -> Result<(Init, String)> {
        self.without_answer(Some("`init` has nothing to answer without the forge"));
        let thread = self.store.thread();
        let init = thread.init().await.map_err(Error::from)?;
        let author = thread.whoami().await.map_err(Error::from)?;
        self.writer();
        Ok((init, author))
    }

    /// Posts what the outbox holds within this verb's drain budget; answers how many are left.
    pub async fn drain(&self) -> usize {
        self.store.drain().await.left
    }
}
