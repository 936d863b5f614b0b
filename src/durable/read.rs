//! Reading through the outbox: drain first, then the outbox, then the thread, so a record another
//! process flushes in between is seen in one or the other.

use std::sync::atomic::Ordering;

use super::{Durable, DurableRead};
use crate::error::{Category, Error, Result};
use crate::store::{Effort, Keep, Thread};

impl<T: Thread> Durable<T> {
    /// Reads the thread through the outbox: drains first, then reads the outbox, then the thread.
    pub async fn read(&self) -> Result<DurableRead> {
        self.read_keeping(&Keep::all()).await
    }

    /// [`Durable::read`], where the store may skip the comments `keep` does not keep.
    pub async fn read_keeping(&self, keep: &Keep) -> Result<DurableRead> {
        let mut out = DurableRead::default();
        let report = self.drain().await;
        if report.left > 0 {
            let dir = self
                .outbox
                .as_ref()
                .map(|o| o.dir().display().to_string())
                .unwrap_or_default();
            out.warnings.push(format!(
                "{} record(s) still wait in the outbox {dir}; they are posted by a later command \
                 or by `forgestate flush`",
                report.left
            ));
        }
        if let Some(outbox) = &self.outbox {
            out.pending = outbox
                .pending()
                .map_err(|e| Error::io("cannot read the outbox", outbox.dir(), e))?;
            out.pending.retain(|s| self.check(s).is_ok());
        }
        let effort = if self.unreachable.load(Ordering::Relaxed) {
            Effort::Once
        } else {
            Effort::Full
        };
        match self.thread.list_keeping(None, effort, keep).await {
            Ok(listing) => out.listing = Some(listing),
            Err(e) => {
                let e = Error::from(e);
                if self.outbox.is_none() || e.category() != Category::TempFail {
                    return Err(e);
                }
                out.warnings.push(format!(
                    "the forge cannot be read ({e}); answering from this machine's outbox only"
                ));
            }
        }
        Ok(out)
    }
}
