//! The command line's own ways to give a request's values, read into the request: `--data`
//! (inline, or `-` for stdin), `--data-file` and `--set key=value` into `checkpoint`'s `data`,
//! and `--metrics` (inline or stdin) into `health`'s. Every check of the values themselves
//! (JSON objects, globs, reasons) is the verb's.

use serde_json::Value;

use forgestate::verbs::{CheckpointFlags, CheckpointRequest, HealthFlags, HealthRequest};

use super::failure::Failure;
use super::input::{apply_sets, json_object, read_input};

/// `checkpoint`'s request, its `data` read from the data flags.
pub(super) fn checkpoint(flags: &CheckpointFlags) -> Result<CheckpointRequest, Failure> {
    let text = read_input(flags.data.as_deref(), flags.data_file.as_ref())?;
    let mut data = json_object("--data", text)?;
    apply_sets(&mut data, &flags.set)?;
    Ok(CheckpointRequest {
        data: Value::Object(data),
        ..flags.request.clone()
    })
}

/// `health`'s request, its `metrics` the text of `--metrics` (the verb parses it, as it does a
/// JSON string from MCP).
pub(super) fn health(flags: &HealthFlags) -> Result<HealthRequest, Failure> {
    let metrics = read_input(flags.metrics.as_deref(), None)?;
    Ok(HealthRequest {
        metrics: metrics.map_or_else(|| Value::Object(Default::default()), Value::String),
        ..flags.request.clone()
    })
}
