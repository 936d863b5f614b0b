//! The record filters `latest`, `list` and `watch` share.

use schemars::JsonSchema;
use serde::Deserialize;

use super::input;
use crate::error::Result;
use crate::format::Kind;
use crate::resume::glob_matches;
use crate::scan::{Filter, Scan};

/// The record filters `latest`, `list` and `watch` share.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FilterRequest {
    /// Only records of this agent; a glob such as "implementation-*" matches several.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub agent: Option<String>,
    /// Only records of this session; a glob such as "sess-*" matches several.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub session: Option<String>,
    /// Only this kind of record. Default: either.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub kind: Option<Kind>,
    /// Only checkpoints whose phase matches this glob, e.g. "subtask_*_complete".
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "GLOB"))]
    pub phase: Option<String>,
}

impl FilterRequest {
    /// The library's filter, every glob checked.
    pub(super) fn filter(&self, since: Option<chrono::DateTime<chrono::Utc>>) -> Result<Filter> {
        input::check_glob("agent", self.agent.as_deref())?;
        input::check_glob("session", self.session.as_deref())?;
        input::check_glob("phase", self.phase.as_deref())?;
        Ok(Filter {
            agent: self.agent.clone(),
            session: self.session.clone(),
            kind: self.kind,
            since,
        })
    }
}

/// Keeps the records whose phase matches `phase` (a glob); health records have none.
pub(super) fn by_phase(mut scan: Scan, phase: &str) -> Scan {
    scan.entries
        .retain(|e| e.record.phase().is_some_and(|p| glob_matches(phase, p)));
    scan
}
