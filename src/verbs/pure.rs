//! The verbs of the format alone, which post nothing: `render` (the body `checkpoint` would
//! post), `parse` (a body back into a record), `resume-map` (an agent's phase table), and
//! `schema` (this table).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{CLI, Context, Face, Run, Spec, Verb, answer_schema, request_schema};
use crate::error::{Error, Result};
use crate::format::{Record, empty_object, parse_time};

/// `render`: a record's fields. `id` and `time` are kept when given, so the same input renders
/// the same body; otherwise the record gets a fresh id and the current time. Other keys
/// (`version`, `comment`, `redacted`, as `parse` and `latest` print them) are ignored.
// Read whole from FILE|- on the CLI ([`RenderFlags`]).
#[derive(Debug, Deserialize, JsonSchema)]
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
                    .unwrap_or(super::records::DEFAULT_STATUS),
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
    const SPEC: Spec = Spec {
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
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
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

/// `parse`: one comment body.
// Read whole from FILE|- on the CLI ([`ParseFlags`]).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParseRequest {
    /// The comment body, markdown as posted.
    pub body: String,
}

/// What `parse` answers: the record (its fields at the top level, as `latest` prints them).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct ParseAnswer {
    /// The record.
    pub record: Record,
}

/// Parse.
pub struct Parse;

impl Verb for Parse {
    type Request = ParseRequest;
    type Answer = ParseAnswer;
    const SPEC: Spec = Spec {
        name: "parse",
        title: "Parse a comment body",
        description: "Parse one comment body into its record, or say why it is not one (exit 65 \
            on the CLI, with the reason code in the error document).",
        opens_store: false,
        flags: &[("body", "<FILE|->")],
        example: r#"{"body": "[CHECKPOINT] w\nVersion: 2.0\nPhase: clone_complete\nSession: s1\nTime: 2026-01-02T03:04:05.000000Z\nId: 0192f000-0000-7000-8000-000000000001\n\nState Data:\n```json\n{}\n```\n"}"#,
        about: "Parse one comment body and print the record as JSON, or why it is not one",
        examples: "  forgestate parse comment.md
  pbpaste | forgestate parse -
  forgestate parse comment.md --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::PURE
    };
}

impl Run for Parse {
    async fn run(ctx: &Context<'_>, r: ParseRequest) -> Result<ParseAnswer> {
        let record = ctx.client.scrub_record(crate::format::parse(&r.body)?);
        Ok(ParseAnswer { record })
    }
}

/// `resume-map`: whose phase table.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ResumeMapRequest {
    /// The agent whose phase table to return.
    #[serde(default = "default_agent")]
    #[cfg_attr(feature = "cli", arg(long, default_value = RESUME_MAP_AGENT))]
    pub agent: String,
}

/// The agent `resume-map` describes when the request names none.
pub const RESUME_MAP_AGENT: &str = "implementation-worker";

fn default_agent() -> String {
    RESUME_MAP_AGENT.to_string()
}

/// What `resume-map` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResumeMapAnswer {
    /// The agent.
    pub agent: String,
    /// The resume point of any phase the table does not name.
    pub default: String,
    /// Phase (a glob) to resume point.
    pub phases: BTreeMap<String, String>,
}

/// Resume map.
pub struct ResumeMapVerb;

impl Verb for ResumeMapVerb {
    type Request = ResumeMapRequest;
    type Answer = ResumeMapAnswer;
    const SPEC: Spec = Spec {
        name: "resume-map",
        title: "An agent's phase table",
        description: "The phase table an agent resumes by (the configured resume map): each \
            phase glob and the resume point it maps to, and the default for any other phase.",
        example: r#"{"agent": "w"}"#,
        about: "Print the phase table an agent resumes by (the resume map as configured)",
        examples: "  forgestate resume-map
  forgestate resume-map --agent pr-self-reviewer --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::PURE
    };
}

impl Run for ResumeMapVerb {
    async fn run(ctx: &Context<'_>, r: ResumeMapRequest) -> Result<ResumeMapAnswer> {
        let map = ctx.client.resume_map();
        Ok(ResumeMapAnswer {
            phases: map.phases(&r.agent),
            default: map.default_point().to_string(),
            agent: r.agent,
        })
    }
}

/// `schema` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaRequest {}

/// One verb in `schema`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VerbDoc {
    /// The verb's name.
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// What it does, for a model.
    pub description: &'static str,
    /// It changes nothing.
    pub read_only: bool,
    /// It may delete or overwrite.
    pub destructive: bool,
    /// Repeating it has no further effect.
    pub idempotent: bool,
    /// It may reach a forge over the network.
    pub open_world: bool,
    /// The faces that expose it.
    pub faces: &'static [Face],
    /// How it runs: `library` (behind `forgestate call` and MCP), `machine` (over this
    /// machine's configuration: `forgestate --json VERB`) or `streams` (a stream of events).
    pub runs: &'static str,
    /// Each request field's CLI form: its flag (`--blocker`, given once per item of a list), or
    /// `<FILE|->` for one read from a file or stdin.
    pub flags: BTreeMap<String, String>,
    /// The arguments a program may pass in order (the Python package's positional ones).
    pub positional: Vec<String>,
    /// The request's JSON Schema.
    pub request: Map<String, Value>,
    /// The answer's JSON Schema.
    pub answer: Map<String, Value>,
}

/// What `schema` answers: the verb table.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SchemaAnswer {
    /// Every verb.
    pub verbs: Vec<VerbDoc>,
}

impl SchemaAnswer {
    /// The whole table.
    pub fn new() -> SchemaAnswer {
        let verbs = super::table()
            .into_iter()
            .map(|s| {
                let request = (s.request)();
                VerbDoc {
                    name: s.name,
                    title: s.title,
                    description: s.description,
                    read_only: s.read_only,
                    destructive: s.destructive,
                    idempotent: s.idempotent,
                    open_world: s.open_world,
                    faces: s.faces,
                    runs: super::runs(s.name).unwrap_or(super::Runs::Library).name(),
                    flags: cli_flags(s, &request),
                    positional: super::positional::positional(s.name, &request),
                    request,
                    answer: (s.answer)(),
                }
            })
            .collect();
        SchemaAnswer { verbs }
    }
}

/// Each request field of `spec` and its CLI form: the spec's own name for it (`*` standing for
/// every field), else the field's name in kebab case.
fn cli_flags(spec: &Spec, request: &Map<String, Value>) -> BTreeMap<String, String> {
    let fields = request.get("properties").and_then(Value::as_object);
    fields
        .into_iter()
        .flat_map(|f| f.keys())
        .map(|field| {
            let named = spec
                .flags
                .iter()
                .find(|(f, _)| f == field || *f == "*")
                .map(|(_, flag)| *flag);
            let flag = match named {
                Some(form) if form.starts_with('<') => form.to_string(),
                Some(flag) => format!("--{flag}"),
                None => format!("--{}", field.replace('_', "-")),
            };
            (field.clone(), flag)
        })
        .collect()
}

impl Run for Schema {
    async fn run(_: &Context<'_>, _: SchemaRequest) -> Result<SchemaAnswer> {
        Ok(SchemaAnswer::new())
    }
}

impl Default for SchemaAnswer {
    fn default() -> Self {
        SchemaAnswer::new()
    }
}

/// Schema.
pub struct Schema;

impl Verb for Schema {
    type Request = SchemaRequest;
    type Answer = SchemaAnswer;
    const SPEC: Spec = Spec {
        name: "schema",
        title: "The verb table",
        description: "Every verb with its nature (read-only, destructive, idempotent, reaching \
            the network), the faces that expose it, and the JSON Schemas of its request and \
            answer.",
        faces: CLI,
        opens_store: false,
        example: "{}",
        about: "Print the verb table as one JSON object: every verb's nature, faces, and the JSON Schemas of its request and answer",
        examples: "  forgestate schema
  forgestate schema | jq '.verbs[] | select(.read_only) | .name'",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::PURE
    };
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
impl super::cli::Command for Render {
    type Flags = RenderFlags;

    /// The record read as `call` and MCP read it (a number sent as text included): only the
    /// wording of a mismatch is the CLI's, the record file being data.
    fn request(flags: &RenderFlags) -> Result<RenderRequest> {
        let file = flags.file.clone().unwrap_or_else(|| "-".into());
        let text = super::input::read_text(None, Some(&file))?.unwrap_or_default();
        let wrong = |e: serde_json::Error| {
            Error::data(
                "the record to render",
                format!("not a JSON object with \"agent\", \"session\" and \"phase\": {e}"),
            )
        };
        let value = serde_json::from_str(&text).map_err(wrong)?;
        super::decode::<Render>(value).map_err(wrong)
    }

    fn show(_: &RenderFlags, answer: RenderAnswer, p: &impl super::cli::Printer) -> u8 {
        match p.json_mode() {
            true => p.json(&answer),
            false => p.out(&answer.body),
        }
        0
    }
}

/// `forgestate parse`'s input: the comment body, from a file or stdin.
#[cfg(feature = "cli")]
#[derive(Debug, Clone, clap::Args)]
pub struct ParseFlags {
    /// The comment body to parse; - or nothing reads stdin
    #[arg(value_name = "FILE|-")]
    pub file: Option<std::path::PathBuf>,
}

#[cfg(feature = "cli")]
impl super::cli::Command for Parse {
    type Flags = ParseFlags;

    fn request(flags: &ParseFlags) -> Result<ParseRequest> {
        let file = flags.file.clone().unwrap_or_else(|| "-".into());
        let body = super::input::read_text(None, Some(&file))?.unwrap_or_default();
        Ok(ParseRequest { body })
    }

    /// The record as JSON, with or without `--json`.
    fn show(_: &ParseFlags, answer: ParseAnswer, p: &impl super::cli::Printer) -> u8 {
        p.json(&answer);
        0
    }

    fn alone(request: &ParseRequest) -> Option<Result<ParseAnswer>> {
        Some(
            crate::format::parse(&request.body)
                .map(|record| ParseAnswer {
                    // Answered like every record a read answers (docs/redaction.md), with the
                    // default rules: this face opens no configuration.
                    record: crate::format::Redactor::default().read(record),
                })
                .map_err(Into::into),
        )
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for ResumeMapVerb {
    type Flags = ResumeMapRequest;

    fn request(flags: &ResumeMapRequest) -> Result<ResumeMapRequest> {
        Ok(flags.clone())
    }

    /// `phase -> point` lines, then the default.
    fn show(_: &ResumeMapRequest, map: ResumeMapAnswer, p: &impl super::cli::Printer) -> u8 {
        if p.json_mode() {
            p.json(&map);
            return 0;
        }
        let mut text: Vec<String> = map
            .phases
            .iter()
            .map(|(phase, point)| format!("{phase} -> {point}"))
            .collect();
        text.push(format!("(any other phase) -> {}", map.default));
        p.out(&text.join("\n"));
        0
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Schema {
    type Flags = SchemaRequest;

    fn request(_: &SchemaRequest) -> Result<SchemaRequest> {
        Ok(SchemaRequest {})
    }

    /// The table as JSON, with or without `--json`.
    fn show(_: &SchemaRequest, answer: SchemaAnswer, p: &impl super::cli::Printer) -> u8 {
        p.page(&answer);
        0
    }

    fn alone(_: &SchemaRequest) -> Option<Result<SchemaAnswer>> {
        Some(Ok(SchemaAnswer::new()))
    }
}
