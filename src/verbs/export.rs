//! `export`: a thread copied into a local store.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Run, Spec, Verb};
use crate::Exported;
use crate::error::{Error, Result};

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
    const DECLARED: Spec = Spec {
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

#[cfg(feature = "cli")]
impl super::cli::Command for Export {
    type Flags = ExportRequest;

    fn show(_: &ExportRequest, answer: Exported, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        p.answer(&answer, |a| {
            format!(
                "exported {} record(s) to {}: {} written, {} already there",
                a.records, a.to, a.written, a.already
            )
        })
    }
}
