//! The flags of each verb as its request (ripgrep's low args into high args): one conversion per
//! verb, from what clap parsed to the request type of the verb table, which then runs exactly as
//! it does for MCP and Python.
//!
//! Only what is the command line's own happens here: reading `--data-file` or stdin, laying
//! `--set key=value` over `--data`, parsing a duration flag into its `*_secs` field. Every check
//! of the values themselves (globs, reasons, JSON objects, context files) is the verb's.

use serde_json::Value;

use forgestate::verbs::{self, CheckpointRequest, HealthRequest};

use super::args::{CheckpointArgs, HealthArgs};
use super::failure::Failure;
use super::input::{apply_sets, json_object, read_input};

/// A verb's flags, as clap parsed them.
pub(super) trait Flags {
    /// The verb they are the flags of.
    type Verb: verbs::Verb;
    /// The verb's request.
    fn request(&self) -> Result<<Self::Verb as verbs::Verb>::Request, Failure>;
}

impl Flags for CheckpointArgs {
    type Verb = verbs::Checkpoint;
    fn request(&self) -> Result<CheckpointRequest, Failure> {
        let text = read_input(self.data.as_deref(), self.data_file.as_ref())?;
        let mut data = json_object("--data", text)?;
        apply_sets(&mut data, &self.set)?;
        let s = &self.session_flags;
        let intent_data = match &s.intent_data {
            Some(text) => Some(serde_json::from_str(text).map_err(|e| {
                forgestate::Error::usage(format!("--intent-data is not JSON: {e}"))
            })?),
            None => None,
        };
        Ok(CheckpointRequest {
            agent: self.agent.clone(),
            session: self.session.clone(),
            phase: self.phase.clone(),
            data: Value::Object(data),
            next: self.next.clone(),
            blockers: self.blockers.clone(),
            context_file: self.context_file.clone(),
            intent: s.intent.clone(),
            intent_data,
            done: s.done.clone(),
            if_latest: s.if_latest.clone(),
            merge: s.merge,
            parent: s.parent.clone(),
            id: self.id.clone(),
        })
    }
}

impl Flags for HealthArgs {
    type Verb = verbs::Health;
    fn request(&self) -> Result<HealthRequest, Failure> {
        // The verb parses the metrics text, as it does a JSON string from MCP.
        let metrics = read_input(self.metrics.as_deref(), None)?;
        Ok(HealthRequest {
            agent: self.agent.clone(),
            session: self.session.clone(),
            status: Some(self.status.clone()),
            metrics: metrics.map_or_else(|| Value::Object(Default::default()), Value::String),
            next_check: self.next_check.clone(),
        })
    }
}
