//! `render`: the body `checkpoint` would post, posting nothing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Context, Run, Spec, Verb};
use crate::error::{Error, Result};
use crate::format::{Record, empty_object, parse_time};

/// `render`: a record's fields. `id` and `time` are kept when given, so the same input renders
/// the same body; otherwise the record gets a fresh id and the current time. Other keys
/// (`version`, `comment`, `redacted`, as `parse` and `latest` print them) are ignored.
// Read whole from FILE|- on the CLI ([`RenderFlags`]).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RenderRequest {
    /// "checkpoint" (the default) or "health".
    #[serde(default)]
    pub kind: Option<String>,
    /// The agent.
    pub agent: String,
    /// The session.
    pub session: String,
    /// A checkpoint's phase.
    #[serde(default)]
    pub phase: Option<String>,
    /// A checkpoint's data object.
    #[serde(default)]
    pub data: Option<Value>,
    /// A health record's status (default "Active").
    #[serde(default)]
    pub status: Option<String>,
    /// A health record's metrics object.
    #[serde(default)]
    pub metrics: Option<Value>,
    /// A health record's next check.
    #[serde(default)]
    pub next_check: Option<String>,
    /// The record id to keep.
    #[serde(default)]
    pub id: Option<String>,
    /// The record time to keep (RFC 3339).
    #[serde(default)]
    pub time: Option<String>,
    /// The sequence number.
    #[serde(default)]
    pub seq: Option<u64>,
    /// The parent record id.
    #[serde(default)]
    pub parent: Option<String>,
}

impl RenderRequest {
    /// The record the request describes, refusing what `checkpoint` and `health` would refuse.
    pub fn record(self) -> Result<Record> {
        let bad = |reason: String| Error::data("the record to render", reason);
        let missing = |field: &str, kind: &str| bad(format!("a {kind} needs \"{field}\""));
        let record = match self.kind.as_deref().unwrap_or("checkpoint") {
            "checkpoint" => Record::checkpoint(
                &self.agent,
                &self.session,
                &self.phase.ok_or_else(|| missing("phase", "checkpoint"))?,
                self.data.unwrap_or_else(empty_object),
            ),
            "health" => Record::health(
                &self.agent,
                &self.session,
                self.status
                    .as_deref()
                    .unwrap_or(super::health::DEFAULT_STATUS),
                self.metrics.unwrap_or_else(empty_object),
                self.next_check.as_deref(),
            ),
            other => {
                return Err(bad(format!(
                    "\"kind\" is {other:?}; use \"checkpoint\" or \"health\""
                )));
            }
        }?;
        let mut record = record.with_lineage(self.seq, self.parent);
        if let Some(id) = self.id {
            record.id = Some(id);
        }
        if let Some(time) = self.time {
            record.time = parse_time(&time).map_err(|e| bad(format!("\"time\": {e}")))?;
        }
        record.check()?;
        Ok(record)
    }
}

/// What `render` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RenderAnswer {
    /// The comment body `checkpoint` or `health` would post (redacted, within the size cap, with
    /// the configured templates).
    pub body: String,
    /// The record it holds (after redaction).
    pub record: Record,
}

/// Render.
pub struct Render;

impl Verb for Render {
    type Request = RenderRequest;
    type Answer = RenderAnswer;
    const DECLARED: Spec = Spec {
        name: "render",
        title: "Render a record",
        description: "The comment body `checkpoint` or `health` would post for a record given as \
            JSON, redacted, within the size cap and with the configured templates, without \
            posting it. For callers that post comments themselves.",
        flags: &[("*", "<FILE|->")],
        example: r#"{"agent": "w", "session": "s1", "phase": "clone_complete", "seq": 3,
            "id": "0192f000-0000-7000-8000-000000000001", "time": "2026-01-02T03:04:05Z"}"#,
        about: "Print the comment body `checkpoint` or `health` would post for a record given as JSON",
        examples: "  echo '{\"agent\": \"w\", \"session\": \"s1\", \"phase\": \"clone_complete\"}' | forgestate render
  forgestate parse comment.md | forgestate render --json",
        ..Spec::PURE
    };
}

impl Run for Render {
    async fn run(ctx: &Context<'_>, r: RenderRequest) -> Result<RenderAnswer> {
        let record = ctx.client.prepare(r.record()?)?;
        let body = ctx.client.renderer().render(&record)?;
        Ok(RenderAnswer { body, record })
    }
}

/// `forgestate render`'s input: the record as JSON, from a file or stdin.
#[cfg(feature = "cli")]
#[derive(Debug, Clone, clap::Args)]
pub struct RenderFlags {
    /// The record as a JSON object (as `parse` prints it); - or nothing reads stdin
    #[arg(value_name = "FILE|-")]
    pub file: Option<std::path::PathBuf>,
}

#[cfg(feature = "cli")]
impl super::cli::MakeRequest<RenderRequest> for RenderFlags {
    /// The record read as `call` and MCP read it (a number sent as text included): only the
    /// wording of a mismatch is the CLI's, the record file being data.
    fn request(&self) -> Result<RenderRequest> {
        let file = self.file.clone().unwrap_or_else(|| "-".into());
        let text = crate::verbs::input::read_text(None, Some(&file))?.unwrap_or_default();
        let wrong = |e: serde_json::Error| {
            Error::data(
                "the record to render",
                format!("not a JSON object with \"agent\", \"session\" and \"phase\": {e}"),
            )
        };
        let value = serde_json::from_str(&text).map_err(wrong)?;
        crate::verbs::decode::<Render>(value).map_err(wrong)
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Render {
    type Flags = RenderFlags;

    fn show(_: &RenderRequest, answer: RenderAnswer, p: &impl super::cli::Printer) -> u8 {
        p.answer(&answer, |a| a.body.clone())
    }
}
