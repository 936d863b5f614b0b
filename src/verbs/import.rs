//! `import`: a local store's records posted to the configured store.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Context, Run, Spec, Verb};
use crate::Imported;
use crate::error::{Error, Result};

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
    const DECLARED: Spec = Spec {
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
impl super::cli::Command for Import {
    type Flags = ImportRequest;

    /// The counts; exit 75 when an outage stopped it (run it again).
    fn show(_: &ImportRequest, answer: Imported, p: &impl super::cli::Printer) -> u8 {
        p.warn(&answer.warnings);
        if !p.quiet() {
            for why in &answer.refused {
                p.note(&format!("warning: not imported: {why}"));
            }
        }
        p.answer(&answer, |a| {
            format!(
                "imported {} of {} record(s) into {}: {} already there, {} spooled, {} refused, \
                 {} left",
                a.posted,
                a.records,
                a.to,
                a.already,
                a.spooled,
                a.refused.len(),
                a.left
            )
        });
        if answer.spooled > 0 { 75 } else { 0 }
    }
}
