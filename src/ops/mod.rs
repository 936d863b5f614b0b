//! The supervisor's verbs over a read thread: `status`, `history` (with JSON diffs) and `fork`.
//!
//! Pure, like [`crate::scan`]: each takes the records [`crate::Client`] read and answers with a
//! `Serialize` value whose JSON is the verb's documented `--json` shape. The client methods
//! ([`crate::Client::status`], [`crate::Client::history`], [`crate::Client::fork`]) read the
//! thread and call these; the CLI, the MCP server and the Python package call those.

pub mod diff;
pub mod fork;
pub mod history;
pub mod status;

pub use fork::fork_record;
pub use history::{History, Origin, Step, history};
pub use status::{StatusConfig, StatusPolicy, StatusRow, Thresholds, Verdict, status};
