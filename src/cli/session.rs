//! `forgestate end` and the session flags of `checkpoint` (`--intent`, `--intent-data`,
//! `--done`, `--if-latest`, `--merge`, `--parent`): flags in, the library's checks and
//! [`forgestate::Client::save_as`], the answer out like any save.

use clap::Args;

use forgestate::Write;
use forgestate::format::Record;
use forgestate::verbs::{check_reason, records_with_intent};

use super::args::Cli;
use super::{Failure, open, save_as};

/// The flags `checkpoint` takes to continue a session safely.
#[derive(Debug, Args)]
pub struct SessionFlags {
    /// Write-ahead intent: the side effect about to happen (e.g. create_pr); `resume` reports
    /// it as pending until a later checkpoint confirms it
    #[arg(long, value_name = "NAME")]
    pub intent: Option<String>,
    /// JSON the intent needs to check the world later (e.g. '{"branch": "fix-42"}')
    #[arg(long, value_name = "JSON", requires = "intent")]
    pub intent_data: Option<String>,
    /// Confirm this intent explicitly (any later checkpoint confirms an earlier one anyway)
    #[arg(long, value_name = "NAME")]
    pub done: Option<String>,
    /// Compare-and-set: post only if the newest record of this agent and session is ID
    /// (resume's latest_id); otherwise post nothing and exit 73
    #[arg(long, value_name = "ID")]
    pub if_latest: Option<String>,
    /// Start from the session's newest checkpoint data and apply --data/--set on top
    #[arg(long)]
    pub merge: bool,
    /// The record this one continues from (its Parent: line), e.g. the latest_id resume
    /// printed; without it (and without --if-latest) the record names no parent
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
}

impl SessionFlags {
    /// `record` with the intent flags applied, and how the write continues the session.
    pub(super) fn apply(&self, record: Record) -> Result<(Record, Write), Failure> {
        let data = match &self.intent_data {
            Some(text) => Some(serde_json::from_str(text).map_err(|e| {
                forgestate::Error::usage(format!("--intent-data is not JSON: {e}"))
            })?),
            None => None,
        };
        let record = records_with_intent(
            record,
            self.intent.clone(),
            data,
            self.done.clone(),
            "--intent-data",
        )?;
        let write = Write {
            if_latest: self.if_latest.clone(),
            merge: self.merge,
            parent: self.parent.clone(),
        };
        Ok((record, write))
    }
}

#[derive(Debug, Args)]
pub struct EndArgs {
    /// The agent whose session ends
    #[arg(long)]
    pub agent: String,
    /// The session that ends
    #[arg(long)]
    pub session: String,
    /// Why: completed, interrupted, error or user_stop
    #[arg(long)]
    pub reason: String,
    /// A note in words (what was finished, what went wrong)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
}

/// Runs `end`.
pub(super) async fn end(cli: &Cli, a: &EndArgs) -> Result<u8, Failure> {
    check_reason("--reason", &a.reason)?;
    let record = Record::end(&a.agent, &a.session, &a.reason, a.note.as_deref())
        .map_err(forgestate::Error::from)?;
    save_as(cli, &open(cli)?, record, Write::default()).await
}
