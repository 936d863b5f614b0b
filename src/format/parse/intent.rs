//! The intent's data: a `json-intent` block after the record's data, which seed readers (who
//! look for a `json` fence only) never see.

use serde_json::Value;

use super::{ParseError, fenced_block};

/// The data of an intent: the first `json-intent` block after the record's data, or `null`.
/// Seed readers look for a `json` fence only, so they never see it.
pub(super) fn intent_data(body: &str, after: usize) -> Result<Value, ParseError> {
    let Some((range, text)) = fenced_block(&body[after..], "json-intent") else {
        return Ok(Value::Null);
    };
    serde_json::from_str(&text).map_err(|e| ParseError::BadJson {
        line: body[..after + range.start].matches('\n').count() + 1 + e.line(),
        column: e.column(),
        message: format!("in the intent's data: {e}"),
    })
}
