//! forgestate: persist and resume AI agents' work as versioned comments on one forge issue.
//!
//! Layout, from the wire up:
//! - [`format`]: render and parse `[CHECKPOINT]`/`[HEALTH]` comment bodies. Pure, no IO.
pub mod format;
