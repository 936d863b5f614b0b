//! The flags of `forgestate end`, and the session flags of `checkpoint` (`--intent`,
//! `--intent-data`, `--done`, `--if-latest`, `--merge`, `--parent`); `requests.rs` makes them
//! the verbs' requests.

use clap::Args;

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
    /// The record this one continues from (its Parent: line): a record id, e.g. the latest_id
    /// resume printed; without it, the last record of the session this machine saved or resumed
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
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
