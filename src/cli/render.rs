//! `forgestate render` and `forgestate resume-map`: the format and the resume map as the
//! configuration makes them, for callers that post comments themselves (the Python package's
//! `format_checkpoint_comment`, `PHASE_RESUME_MAP`).

use forgestate::Error;
use forgestate::verbs::{self, Render, ResumeMapRequest, ResumeMapVerb};

use super::args::{Cli, RenderArgs};
use super::failure::Failure;
use super::input::read_input;
use super::output;
use super::verb::run;

fn bad(reason: impl Into<String>) -> Failure {
    Error::data("the record to render", reason).into()
}

/// `forgestate render`: prints the comment body `checkpoint`/`health` would post for a record,
/// redacted and within the size cap, using the configured templates.
pub async fn render(cli: &Cli, a: &RenderArgs) -> Result<u8, Failure> {
    let file = a.file.clone().unwrap_or_else(|| "-".into());
    let text = read_input(None, Some(&file))?.unwrap_or_default();
    // Read as `call` and MCP read it (a number sent as text included): only the wording of a
    // mismatch is the CLI's, the record file being data.
    let wrong = |e| {
        bad(format!(
            "not a JSON object with \"agent\", \"session\" and \"phase\": {e}"
        ))
    };
    let value = serde_json::from_str(&text).map_err(wrong)?;
    let request = verbs::decode::<Render>(value).map_err(wrong)?;
    let answer = run::<Render>(cli, request).await?;
    if cli.json {
        output::json(&answer);
    } else {
        output::out(&answer.body);
    }
    Ok(0)
}

/// `forgestate resume-map`: the phase table an agent resumes by, and the default.
pub async fn resume_map(cli: &Cli, a: &ResumeMapRequest) -> Result<u8, Failure> {
    let map = run::<ResumeMapVerb>(cli, a.clone()).await?;
    if cli.json {
        output::json(&map);
    } else {
        let mut text: Vec<String> = map
            .phases
            .iter()
            .map(|(phase, point)| format!("{phase} -> {point}"))
            .collect();
        text.push(format!("(any other phase) -> {}", map.default));
        output::out(&text.join("\n"));
    }
    Ok(0)
}
