//! Operator and supervisor verbs over the library: `status`, `history` (with JSON diffs), `fork`,
//! `watch`, `prune` and `doctor`.
//!
//! `status`, `history` and `fork` are pure, like [`crate::scan`]: each takes the records
//! [`crate::Client`] read and answers with a `Serialize` value whose JSON is the verb's documented
//! `--json` shape. `watch`, `prune` and `doctor` drive a thread or a probe. The client methods
//! ([`crate::Client::status`], [`crate::Client::history`], [`crate::Client::fork`]) read the
//! thread and call these; the CLI, the MCP server and the Python package call those.

pub mod diff;
pub mod doctor;
pub mod fork;
pub mod history;
pub mod prune;
pub mod status;
pub mod watch;

pub use fork::fork_record;
pub use history::{History, Origin, Step, history};
pub use status::{StatusConfig, StatusPolicy, StatusRow, Thresholds, Verdict, status};
