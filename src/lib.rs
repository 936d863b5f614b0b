//! forgestate: persist and resume AI agents' work as versioned comments on one forge issue.
//!
//! Layout, from the wire up (see `ARCHITECTURE.md`):
//! - [`format`](mod@format): render and parse `[CHECKPOINT]`/`[HEALTH]` comment bodies. Pure, no IO.
//! - [`store`]: where bodies live; the [`store::Thread`] trait and the local JSONL store.
//! - [`forge`]: the Forgejo/Gitea backend (HTTP client, session issue discovery). No format.
//! - [`backend`]: [`backend::AnyThread`], the run-time choice between them.
//! - [`scan`]: from a thread's comments to trusted, deduped records. Pure.
//! - [`resume`]: phase to resume point, and the typed implementation state.
//! - [`report`]: the supervisor's reports, pure: `status` verdicts, `history` with JSON diffs, `fork`.
//! - [`durable`]: [`Durable`], the durability layer: outbox, drain, dead letters, flush.
//! - [`client`]: the verbs over any store, and the front door: [`Client::local`],
//!   [`Client::forge`] and [`Client::from_config`].
//! - [`config`]: configuration files, discovery and precedence; [`defaults`]: every default.
//! - [`doctor`]: the setup checks; the drivers `watch` and `prune` are in [`client`].
//! - [`verbs`]: the verb table (typed requests and answers, their nature, which faces expose
//!   them), from which the CLI and the MCP server are generated.
//! - [`error`]: the crate-wide error and its categories.
//! - [`progress`]: the hook long work (flush, sync, prune, rotate) reports its progress through.
//!
//! Runnable examples (`cargo run --example NAME`): `examples/implementation_worker.rs`, seed 003's
//! complete implementation flow (clone, subtasks with a checkpoint after each, commit, pull
//! request) that resumes after a kill without redoing a finished step, on the local store or a
//! forge. The front door ([`Client::local`], [`Client::forge`], [`Client::save`]) carries examples
//! that run as doc tests.
//!
//! ```
//! use forgestate::format::{Record, Renderer, parse};
//! use serde_json::json;
//!
//! let record = Record::checkpoint("implementation-worker", "sess-1", "clone_complete",
//!     json!({"issue_number": 42}))?;
//! let body = Renderer::embedded()?.render(&record)?;
//! assert!(body.starts_with("[CHECKPOINT] implementation-worker\nVersion: 2.0\n"));
//! assert_eq!(parse(&body)?, record);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod backend;
pub mod client;
pub mod config;
pub mod defaults;
pub mod doctor;
pub mod durable;
pub mod error;
pub mod forge;
pub mod format;
mod fsutil;
pub mod mirror;
pub mod progress;
pub mod report;
pub mod resume;
pub mod scan;
pub mod store;
pub mod verbs;

pub use client::{
    Client, Exported, ForgeBuilder, ForkQuery, HistoryQuery, Imported, Latest, ListQuery, Outcome,
    Posted, Published, Resumed, Rotation, Status, Write,
};
pub use durable::{Durable, FlushReport};
pub use error::{Category, Error, Result};
