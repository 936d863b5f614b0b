//! What every verb that writes a record answers, [`SaveAnswer`] (posted, or safe in this
//! machine's outbox, and any automatic rotation), and how a save shows on the command line.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Result;
use crate::format::Record;
use crate::{Outcome, Rotation};

/// What `checkpoint`, `health` and `fork` answer: posted, or safe in this machine's outbox (not an
/// error).
#[derive(Debug, Serialize, JsonSchema)]
pub struct SaveAnswer {
    /// In the thread now (false: waiting in this machine's outbox, posted by a later call or
    /// `forgestate flush`).
    pub posted: bool,
    /// The record's id.
    pub id: Option<String>,
    /// The store's comment id, once posted.
    pub comment_id: Option<u64>,
    /// The comment's web address, where the store has one.
    pub url: Option<String>,
    /// The store the record went to.
    pub store: Option<String>,
    /// The outbox entry holding the record, when it was spooled.
    pub spooled: Option<PathBuf>,
    /// Why it was spooled.
    pub cause: Option<String>,
    /// Retrying cannot post it: the cause must be fixed first (then `forgestate flush`).
    pub permanent: bool,
    /// The record as stored (after redaction).
    pub record: Record,
    /// The automatic rotation this save triggered: the session issue was over its comment limit and
    /// was replaced by a new one carrying each session's newest records.
    pub rotation: Option<Rotation>,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

impl SaveAnswer {
    /// The answer of a save through `client`, or the error of a record stored nowhere. A spooled
    /// record's warning says where it waits and how many records wait with it, so an agent that
    /// stops now leaves no silent backlog (every face shows the same warning).
    pub fn saved<T: crate::store::Thread>(
        client: &crate::Client<T>,
        outcome: Outcome,
    ) -> Result<SaveAnswer> {
        match outcome {
            Outcome::Posted(p) => {
                let mut warnings = Vec::new();
                if let Some(e) = &p.rotation_failed {
                    warnings.push(format!(
                        "the session issue is over its comment limit and rotating it failed: \
                         {e}; a later record tries again, or run `forgestate rotate`"
                    ));
                }
                if let Some(e) = &p.dashboard_failed {
                    warnings.push(format!(
                        "refreshing the status table in the session issue's body failed: {e}; \
                         the record is posted (run `forgestate status --publish`)"
                    ));
                }
                if let Some(r) = &p.rotation {
                    let skipped = r.skipped.iter();
                    warnings.extend(skipped.map(|why| super::rotate::not_carried(why, r.from)));
                }
                Ok(SaveAnswer {
                    posted: true,
                    id: p.id,
                    comment_id: Some(p.comment_id),
                    url: p.url,
                    store: Some(p.store),
                    spooled: None,
                    cause: None,
                    permanent: false,
                    record: p.record,
                    rotation: p.rotation,
                    warnings,
                })
            }
            Outcome::Spooled {
                record,
                path,
                cause,
            } => {
                let permanent = !cause.retry_may_fix();
                let mut warnings = Vec::new();
                if permanent {
                    warnings.push(format!(
                        "{cause}; fix this, then run `forgestate flush`: flushing cannot succeed \
                         until it is fixed"
                    ));
                }
                let waiting = client.outbox().map_or(1, |o| o.len().max(1));
                let redacted = record
                    .redacted
                    .map(|n| format!(" ({n} secret value(s) redacted)"))
                    .unwrap_or_default();
                warnings.push(format!(
                    "{} {} spooled to {} ({cause}){redacted}; {waiting} record(s) wait in the \
                     outbox: run `forgestate flush` to post them (the next forgestate command \
                     also tries)",
                    record.kind().name(),
                    record.id.as_deref().unwrap_or("(no id)"),
                    path.display(),
                ));
                Ok(SaveAnswer {
                    posted: false,
                    id: record.id.clone(),
                    comment_id: None,
                    url: None,
                    store: None,
                    spooled: Some(path),
                    cause: Some(cause.to_string()),
                    permanent,
                    record,
                    rotation: None,
                    warnings,
                })
            }
            Outcome::Failed(e) => Err(e),
        }
    }
}

/// What `--strict` says of a save of a `kind` record (its id `id`) that waits in the outbox.
pub fn spooled_strict(kind: &str, id: Option<&str>) -> String {
    format!(
        "{kind} {} was spooled to the outbox, not posted (--strict); `forgestate flush` posts it",
        id.unwrap_or("(no id)")
    )
}

#[cfg(feature = "cli")]
impl SaveAnswer {
    /// Shows a save on the command line: posted (with what its automatic rotation did), or
    /// spooled to the outbox, which `--strict` makes a failure (exit 75, the JSON answer
    /// carrying the error).
    pub fn show(self, p: &impl super::cli::Printer) -> u8 {
        if self.posted {
            if let Some(report) = self.rotation.as_ref().filter(|_| !p.quiet()) {
                p.note(&crate::verbs::rotate::rotation_text(report));
            }
            p.warn(&self.warnings);
            return p.answer(&self, posted_text);
        }
        // A cause only fixing something can cure is an error line (the first warning says what
        // to fix), shown even with --quiet.
        if !p.quiet() || self.permanent {
            for (i, w) in self.warnings.iter().enumerate() {
                let level = match self.permanent && i == 0 {
                    true => "error",
                    false => "warning",
                };
                p.note(&format!("{level}: {w}"));
            }
        }
        let code = if p.strict() { 75 } else { 0 };
        if p.json_mode() && code != 0 {
            let message = spooled_strict(self.record.kind().name(), self.id.as_deref());
            let error = p.error_object(&crate::Error::unavailable(message));
            p.json(&Failed {
                answer: &self,
                error,
            });
        } else if p.json_mode() {
            p.json(&self);
        }
        code
    }
}

/// A save `--strict` refused, as its JSON document: the answer's fields, and the `error` object
/// beside them (the change stands, but failed the caller).
#[cfg(feature = "cli")]
#[derive(Serialize)]
struct Failed<'a> {
    #[serde(flatten)]
    answer: &'a SaveAnswer,
    error: super::FlushError,
}

/// `checkpoint 0193… saved as comment 12 in …`, with the count of redacted values, and the
/// comment's address.
#[cfg(feature = "cli")]
fn posted_text(a: &SaveAnswer) -> String {
    let kind = a.record.kind().name();
    let id = a.id.as_deref().unwrap_or("(no id)");
    let mut line = format!(
        "{kind} {id} saved as comment {} in {}",
        a.comment_id
            .map_or_else(|| "?".to_string(), |c| c.to_string()),
        a.store.as_deref().unwrap_or("the store")
    );
    if let Some(n) = a.record.redacted {
        line.push_str(&format!(" ({n} secret value(s) redacted)"));
    }
    if let Some(url) = &a.url {
        line.push_str(&format!("\n{url}"));
    }
    line
}
