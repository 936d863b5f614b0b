//! `forgestate render` and `forgestate resume-map`: the format and the resume map as the
//! configuration makes them, for callers that post comments themselves (the Python package's
//! `format_checkpoint_comment`, `PHASE_RESUME_MAP`).

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use forgestate::Error;
use forgestate::format::{Record, empty_object, parse_time};

use super::input::read_input;
use super::{Failure, args::Cli, output};

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The record as a JSON object (as `parse` prints it); - or nothing reads stdin
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ResumeMapArgs {
    /// The agent whose phase table to print
    #[arg(long, default_value = "implementation-worker")]
    pub agent: String,
}

/// What `render` reads: a record's fields. `id` and `time` are kept when given, so the same
/// input renders the same body; otherwise the record gets a fresh id and the current time.
/// Other keys (`version`, `comment`, `redacted`, as `parse` and `latest` print them) are
/// ignored: what is rendered is always a record of the version forgestate writes.
#[derive(Debug, Deserialize)]
struct Draft {
    #[serde(default)]
    kind: Option<String>,
    agent: String,
    session: String,
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    data: Option<Value>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    metrics: Option<Value>,
    #[serde(default)]
    next_check: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    time: Option<String>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    parent: Option<String>,
}

/// `render --json`: the body, and the record it holds (after redaction).
#[derive(Serialize)]
struct Rendered<'a> {
    body: &'a str,
    record: &'a Record,
}

/// `resume-map --json`.
#[derive(Serialize)]
struct MapDoc<'a> {
    agent: &'a str,
    default: &'a str,
    phases: std::collections::BTreeMap<String, String>,
}

fn bad(reason: impl Into<String>) -> Failure {
    Error::data("the record to render", reason).into()
}

/// Builds the record a draft describes, refusing what `checkpoint` and `health` would refuse.
fn record(draft: Draft) -> Result<Record, Failure> {
    let missing = |field: &str, kind: &str| bad(format!("a {kind} needs \"{field}\""));
    let record = match draft.kind.as_deref().unwrap_or("checkpoint") {
        "checkpoint" => Record::checkpoint(
            &draft.agent,
            &draft.session,
            &draft.phase.ok_or_else(|| missing("phase", "checkpoint"))?,
            draft.data.unwrap_or_else(empty_object),
        ),
        "health" => Record::health(
            &draft.agent,
            &draft.session,
            draft.status.as_deref().unwrap_or("Active"),
            draft.metrics.unwrap_or_else(empty_object),
            draft.next_check.as_deref(),
        ),
        other => {
            return Err(bad(format!(
                "\"kind\" is {other:?}; use \"checkpoint\" or \"health\""
            )));
        }
    }
    .map_err(Error::from)?;
    let mut record = record.with_lineage(draft.seq, draft.parent);
    if let Some(id) = draft.id {
        record.id = Some(id);
    }
    if let Some(time) = draft.time {
        record.time = parse_time(&time).map_err(|e| bad(format!("\"time\": {e}")))?;
    }
    record.check().map_err(Error::from)?;
    Ok(record)
}

/// `forgestate render`: prints the comment body `checkpoint`/`health` would post for a record,
/// redacted and within the size cap, using the configured templates.
pub fn render(cli: &Cli, a: &RenderArgs) -> Result<u8, Failure> {
    let file = a.file.clone().unwrap_or_else(|| "-".into());
    let text = read_input(None, Some(&file))?.unwrap_or_default();
    let draft: Draft = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "not a JSON object with \"agent\", \"session\" and \"phase\": {e}"
        ))
    })?;
    let record = record(draft)?;
    let client = super::open(cli)?;
    let record = client.prepare(record)?;
    let body = client.renderer().render(&record).map_err(Error::from)?;
    if cli.json {
        output::json(&Rendered {
            body: &body,
            record: &record,
        });
    } else {
        output::out(&body);
    }
    Ok(0)
}

/// `forgestate resume-map`: the phase table an agent resumes by, and the default.
pub fn resume_map(cli: &Cli, a: &ResumeMapArgs) -> Result<u8, Failure> {
    let (config, _) = super::load(cli)?;
    let map = config.resume_map()?;
    let phases = map.phases(&a.agent);
    if cli.json {
        output::json(&MapDoc {
            agent: &a.agent,
            default: map.default_point(),
            phases,
        });
    } else {
        let mut text: Vec<String> = phases
            .iter()
            .map(|(phase, point)| format!("{phase} -> {point}"))
            .collect();
        text.push(format!("(any other phase) -> {}", map.default_point()));
        output::out(&text.join("\n"));
    }
    Ok(0)
}
