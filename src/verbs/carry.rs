//! The verbs that move a thread or show it to people: `publish` (`status --publish`: the
//! status table in the session issue's body), `export` (a thread into a local store) and
//! `import` (a local store's records to the configured store).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Group, Run, Spec, Verb, answer_schema, request_schema};
use crate::error::{Error, Result};
use crate::report::Thresholds;
use crate::{Exported, Imported, Published};

/// `publish`: the status table into the session issue's body.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct PublishRequest {
    /// How long without any record before an agent is "warning": seconds, or a duration such as
    /// "90s", "10m", "2h" (overrides the configured thresholds).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "warn-after", value_name = "DUR", value_parser = super::input::duration_flag))]
    pub warn_after_secs: Option<u64>,
    /// How long without any record before an agent is "stalled": seconds, or a duration such as
    /// "30m" (overrides the configured thresholds).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "stalled-after", value_name = "DUR", value_parser = super::input::duration_flag))]
    pub stalled_after_secs: Option<u64>,
}

/// Publish.
pub struct Publish;

impl Verb for Publish {
    type Request = PublishRequest;
    type Answer = Published;
    const SPEC: Spec = Spec {
        name: "publish",
        title: "Publish the status table",
        description: "Write the status table (agent, session, verdict, phase, resume point, last \
            seen, next, blockers) into the session issue's body between two markers, for people \
            reading the forge's web UI (`status --publish`). Text outside the markers is kept \
            byte for byte; an unchanged table is not written. Returns the issue, whether the \
            body was written, and the table.",
        faces: super::ALL,
        group: Group::Supervisors,
        flags: &[
            ("warn_after_secs", "warn-after"),
            ("stalled_after_secs", "stalled-after"),
        ],
        example: r#"{"stalled_after_secs": 3600}"#,
        about: "Write the status table into the session issue's body between two markers (text outside them is kept; an unchanged table is not written); the same as `status --publish`",
        after: "Set [dashboard] auto = true to refresh it after records, at most once every [dashboard] every_minutes (default 5) per machine. `forgestate status --publish` does the same.",
        examples: "  forgestate publish
  forgestate publish --stalled-after 1h --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}

impl Run for Publish {
    async fn run(ctx: &Context<'_>, r: PublishRequest) -> Result<Published> {
        let policy = ctx.policy.clone().force(Thresholds {
            warn_after_secs: r.warn_after_secs,
            stalled_after_secs: r.stalled_after_secs,
        });
        ctx.client.publish_status(&policy).await
    }
}

/// `export`: the thread into a local store.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ExportRequest {
    /// The directory of the local store to write (created when missing).
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub to: String,
}

/// Export.
pub struct Export;

impl Verb for Export {
    type Request = ExportRequest;
    type Answer = Exported;
    const SPEC: Spec = Spec {
        name: "export",
        title: "Export the thread to a local store",
        description: "Write every believed record of the thread (a forge's whole chain of \
            session issues, or a local store) into the local store in `to`, each with its \
            comment id, author and original time, so it can be resumed from or archived. \
            Running it again writes only what is new.",
        example: r#"{"to": "archive"}"#,
        about: "Write the thread's believed records (every session issue of a forge's chain, or a local store) into a local store, with their ids, authors and original times",
        after: "Running it again writes only what is new. Resume from the copy with `forgestate --store ./archive resume --agent w --session s1`.",
        examples: "  forgestate export --to ./archive
  forgestate export --to ./archive --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}

impl Run for Export {
    async fn run(ctx: &Context<'_>, r: ExportRequest) -> Result<Exported> {
        if r.to.trim().is_empty() {
            return Err(Error::usage("to must name a directory".to_string()));
        }
        ctx.client.export_to(std::path::Path::new(&r.to)).await
    }
}

/// `import`: a local store's records to the configured store.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// The directory of the local store to read.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub from: String,
}

/// Import.
pub struct Import;

impl Verb for Import {
    type Request = ImportRequest;
    type Answer = Imported;
    const SPEC: Spec = Spec {
        name: "import",
        title: "Import a local store's records",
        description: "Post the records of the local store in `from` to the configured store \
            (a forge's session issue), in thread order, through the same checks and redaction \
            as every record, each once by its Id: a rerun posts nothing new, and an import \
            interrupted by an outage resumes where it stopped. The original time is kept as \
            `Posted-At:`.",
        example: r#"{"from": "archive"}"#,
        about: "Post a local store's records to the configured forge, in order, each once by Id (a rerun posts nothing new; an interrupted import resumes)",
        examples: "  forgestate import --from ~/.local/state/forgestate/local
  forgestate import --from ./archive --json",
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Spec::OPERATOR
    };
}

impl Run for Import {
    async fn run(ctx: &Context<'_>, r: ImportRequest) -> Result<Imported> {
        if r.from.trim().is_empty() {
            return Err(Error::usage("from must name a directory".to_string()));
        }
        ctx.client.import_from(std::path::Path::new(&r.from)).await
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Publish {
    type Flags = PublishRequest;

    fn request(flags: &PublishRequest) -> Result<PublishRequest> {
        Ok(flags.clone())
    }

    fn show(_: &PublishRequest, answer: Published, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        if p.json_mode() {
            p.json(&answer);
        } else {
            let what = match answer.written {
                true => "published",
                false => "unchanged, not written:",
            };
            p.out(&format!(
                "status table {what} {} row(s) in session issue #{} ({})",
                answer.rows, answer.issue, answer.url
            ));
        }
        0
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Export {
    type Flags = ExportRequest;

    fn request(flags: &ExportRequest) -> Result<ExportRequest> {
        Ok(flags.clone())
    }

    fn show(_: &ExportRequest, answer: Exported, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        if p.json_mode() {
            p.json(&answer);
        } else {
            p.out(&format!(
                "exported {} record(s) to {}: {} written, {} already there",
                answer.records, answer.to, answer.written, answer.already
            ));
        }
        0
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Import {
    type Flags = ImportRequest;

    fn request(flags: &ImportRequest) -> Result<ImportRequest> {
        Ok(flags.clone())
    }

    /// The counts; exit 75 when an outage stopped it (run it again).
    fn show(_: &ImportRequest, answer: Imported, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        if !p.quiet() {
            for why in &answer.refused {
                p.note(&format!("warning: not imported: {why}"));
            }
        }
        if p.json_mode() {
            p.json(&answer);
        } else {
            p.out(&format!(
                "imported {} of {} record(s) into {}: {} already there, {} spooled, {} refused, \
                 {} left",
                answer.posted,
                answer.records,
                answer.to,
                answer.already,
                answer.spooled,
                answer.refused.len(),
                answer.left
            ));
        }
        if answer.spooled > 0 { 75 } else { 0 }
    }
}
