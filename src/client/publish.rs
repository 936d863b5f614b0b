//! `status --publish`: the status table in the session issue's body, between markers (see
//! [`crate::report::dashboard`]), and what rotation does with it: the new issue gets the table,
//! the old one's table becomes a line saying where the thread continues.

use serde::Serialize;

use super::Client;
use super::rotate::forge_err;
use crate::backend::AnyThread;
use crate::error::{Error, Result};
use crate::forge::{ForgeThread, IssueNumber};
use crate::report::{StatusPolicy, dashboard, timeline};
use crate::scan::Filter;
use crate::store::Thread;

/// What publishing the status table did.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Published {
    /// The session issue whose body holds the table.
    pub issue: u64,
    /// Its web page.
    pub url: String,
    /// The body was written; false when the table was already there as it is (no request
    /// sent but the read).
    pub written: bool,
    /// How many rows the table has.
    pub rows: usize,
    /// The table as published (markdown, markers included).
    pub table: String,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

impl Client<AnyThread> {
    /// Publishes the status table (every agent and session, under `policy`) and the phase
    /// timeline of the day before the newest record into the head session issue's body: the
    /// body is read fresh, only what lies between the markers is replaced (the markers and the
    /// table are appended when the body has none), and nothing is written when the table is
    /// unchanged. The table and the timeline come from one read of the thread.
    pub async fn publish_status(&self, policy: &StatusPolicy) -> Result<Published> {
        self.without_answer(Some("publishing has nothing to answer without the forge"));
        let forge = self.forge_for("published")?;
        let (status, entries) = self.status_with_entries(&Filter::default(), policy).await?;
        if status.offline {
            return Err(Error::unavailable(
                "the forge cannot be read, so the status table cannot be computed; try again \
                 when it is reachable",
            ));
        }
        let timeline = timeline::gantt(&entries);
        let table = dashboard::table(&status.rows, timeline.as_deref());
        let n = match forge.head_issue().await.map_err(forge_err)? {
            Some(n) => n,
            None => {
                self.thread_raw().init().await?;
                forge
                    .head_issue()
                    .await
                    .map_err(forge_err)?
                    .ok_or_else(|| {
                        Error::unavailable(
                            "the session issue just created cannot be found; try again".to_string(),
                        )
                    })?
            }
        };
        let edit = forge
            .edit_body(n, |body| dashboard::splice(body, &table))
            .await
            .map_err(forge_err)?;
        Ok(Published {
            issue: n.0,
            url: edit.url,
            written: edit.written,
            rows: status.rows.len(),
            table,
            warnings: status.warnings,
        })
    }

    /// After a rotation from `old` to `new`: when `old`'s body holds a status table, `new`
    /// gets the table (published afresh) and `old`'s table is replaced by a line saying where
    /// the thread continues. Best effort: the records are safe either way, so a failure is a
    /// warning for the caller.
    pub(crate) async fn carry_dashboard(
        &self,
        old: IssueNumber,
        new: IssueNumber,
        new_url: &str,
        policy: &StatusPolicy,
    ) -> Result<bool> {
        let forge = self.forge_for("published")?;
        let moved = forward_note(new, new_url);
        let edit = forge
            .edit_body(old, |body| {
                dashboard::current(body).and_then(|_| dashboard::splice(body, &moved))
            })
            .await
            .map_err(forge_err)?;
        if dashboard::current(&edit.before).is_none() {
            return Ok(false);
        }
        self.publish_status(policy).await?;
        Ok(true)
    }

    /// `[dashboard] auto`: publishes the table unless this machine did within
    /// `[dashboard] every_minutes` (a stamp file in the forge's cache directory holds the time
    /// of its last refresh; without a usable cache directory there is no automatic refresh).
    pub(crate) async fn auto_publish(&self) -> Result<()> {
        let Some(forge) = self.thread_raw().forge() else {
            return Ok(());
        };
        let Some(dir) = forge
            .settings()
            .cache_dir
            .as_deref()
            .and_then(crate::forge::cache::usable_dir)
        else {
            tracing::warn!(
                "[dashboard] auto is on but there is no usable cache directory to remember the \
                 last refresh in; the status table is refreshed only by `status --publish`"
            );
            return Ok(());
        };
        let key = crate::format::context_hash(forge.store_key().as_bytes());
        let stamp = dir.join(format!("dashboard-{}", key.trim_start_matches("sha256:")));
        let now = chrono::Utc::now().timestamp();
        let last = crate::fsutil::read_private(&stamp, 64)
            .ok()
            .and_then(|t| String::from_utf8(t).ok())
            .and_then(|t| t.trim().parse::<i64>().ok());
        let every = i64::try_from(self.dashboard.every.as_secs()).unwrap_or(i64::MAX);
        if last.is_some_and(|t| t <= now && now - t < every) {
            return Ok(());
        }
        self.publish_status(&self.dashboard.policy).await?;
        if let Err(e) = crate::fsutil::write_atomic(&stamp, now.to_string().as_bytes(), true) {
            tracing::warn!(
                "cannot note the status table's refresh in {}: {e}",
                stamp.display()
            );
        }
        Ok(())
    }

    fn forge_for(&self, what: &str) -> Result<&ForgeThread> {
        self.thread_raw().forge().ok_or_else(|| {
            Error::config(format!(
                "the status table is {what} in a forge session issue's body; the local store \
                 has none (use `forgestate status` to read it)"
            ))
        })
    }
}

/// What replaces the table on a rotated-away issue (markers kept, so a rerun is unchanged).
fn forward_note(new: IssueNumber, url: &str) -> String {
    format!(
        "{}\n\nThis session continues in #{} ({url}); the status table is kept there.\n\n{}",
        dashboard::BEGIN,
        new.0,
        dashboard::END
    )
}
