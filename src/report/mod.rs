//! The supervisor's reports, pure like [`crate::scan`] and [`crate::resume`]: `status`
//! verdicts, `history` (with JSON diffs), the record that starts a `fork`, and the status table
//! and phase timeline published in the session issue's body.
//!
//! Each takes the records [`crate::Client`] read and answers with a `Serialize` value whose JSON
//! is the verb's documented `--json` shape. No IO: the client methods
//! ([`crate::Client::status`], [`crate::Client::history`], [`crate::Client::fork`]) read the
//! thread and call these. The drivers (`watch`, `prune`) live in [`crate::client`], and `doctor`
//! in [`crate::doctor`].

pub mod clock;
pub mod dashboard;
pub mod diff;
pub mod fork;
pub mod history;
pub mod session;
pub mod status;
pub mod timeline;
mod verdict;

pub use fork::fork_over;
pub use history::{AgentConflict, History, Origin, Step, history};
pub use session::{Conflict, Ended, Facts, PendingIntent, Sibling, conflict_warning, facts};
pub use status::{StatusConfig, StatusPolicy, StatusRow, Thresholds, Verdict, status};
