//! Reading through the outbox: drain first, then the outbox, then the thread, so a record another
//! process flushes in between is seen in one or the other.

use std::sync::atomic::Ordering;

use super::{Durable, DurableRead};
use crate::error::{Category, Error, Result};
use crate::store::{Effort, Keep, Thread};

/// How an offline read's warning ends when only the outbox answers; a reader with a copy of the
/// thread (the read cache) says so instead.
pub(crate) const OUTBOX_ONLY: &str = "answering from this machine's outbox only";

impl<T: Thread> Durable<T> {
    /// Reads the thread through the outbox: drains first, then reads the outbox, then the thread.
    pub async fn read(&self) -> Result<DurableRead> {
        self.read_keeping(&Keep::all()).await
    }

    /// [`Durable::read`], where the store may skip the comments `keep` does not keep (an
    /// untrusted author's, a body over the parser's cap), without holding their bodies.
    pub async fn read_keeping(&self, keep: &Keep) -> Result<DurableRead> {
        let (listing, mut out) = self
            .read_with(|thread, effort| async move {
                thread
                    .list_keeping(None, effort, keep)
                    .await
                    .map_err(Error::from)
            })
            .await?;
        out.listing = listing;
        Ok(out)
    }

    /// [`Durable::read`] with the thread read by `list` (given the thread and the effort this
    /// read may spend): the read cache reads through here. The answer's `listing` is left
    /// `None`; the first value is what `list` returned, `None` when the store could not be read
    /// and the outbox answers alone.
    pub async fn read_with<'a, L, F, Fut>(&'a self, list: F) -> Result<(Option<L>, DurableRead)>
    where
        F: FnOnce(&'a T, Effort) -> Fut,
        Fut: std::future::Future<Output = Result<L>>,
    {
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
            out.landed = match outbox.landed() {
                Ok(landed) => landed,
                Err(e) => {
                    tracing::warn!(
                        "cannot read this machine's posted records in {}: {e}",
                        outbox.dir().display()
                    );
                    Vec::new()
                }
            };
            out.landed.retain(|s| self.check(s).is_ok());
        }
        let effort = if self.unreachable.load(Ordering::Relaxed) {
            Effort::Once
        } else {
            Effort::Full
        };
        let listed = match list(&self.thread, effort).await {
            Ok(listed) => Some(listed),
            Err(e) => {
                if self.outbox.is_none() || e.category() != Category::TempFail {
                    return Err(e);
                }
                out.warnings
                    .push(format!("the forge cannot be read ({e}); {OUTBOX_ONLY}"));
                None
            }
        };
        Ok((listed, out))
    }
}
