//! `parse`: a comment body back into a record.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Context, Run, Spec, Verb};
use crate::error::Result;
use crate::format::Record;

/// `parse`: one comment body.
// Read whole from FILE|- on the CLI ([`ParseFlags`]).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
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
    const DECLARED: Spec = Spec {
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
        ..Spec::PURE
    };
}

impl Run for Parse {
    async fn run(ctx: &Context<'_>, r: ParseRequest) -> Result<ParseAnswer> {
        let record = ctx.client.scrub_record(crate::format::parse(&r.body)?);
        Ok(ParseAnswer { record })
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
impl super::cli::MakeRequest<ParseRequest> for ParseFlags {
    fn request(&self) -> Result<ParseRequest> {
        let file = self.file.clone().unwrap_or_else(|| "-".into());
        let body = crate::verbs::input::read_text(None, Some(&file))?.unwrap_or_default();
        Ok(ParseRequest { body })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Parse {
    type Flags = ParseFlags;

    /// The record as JSON, with or without `--json`.
    fn show(_: &ParseRequest, answer: ParseAnswer, p: &impl super::cli::Printer) -> u8 {
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
