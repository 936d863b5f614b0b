//! The one out-gate: every body that leaves the machine (a save, an outbox flush, a rotation's
//! carried records, an import) passes here, so the validator and the redactor see it whatever its
//! origin. Pure: a body in, the body to post (or why not) out.
//!
//! A body that is already clean passes byte for byte (the outbox's exactly-once check compares
//! bodies, so a gate that rewrote clean bodies would post copies). A body that holds a secret is
//! parsed, redacted and rendered again; one that is not a record, or whose header holds a secret,
//! is refused.

use std::borrow::Cow;

use thiserror::Error;

use super::parse::{ParseError, parse};
use super::record::BuildError;
use super::redact::Redactor;
use super::render::{RenderError, Renderer};
use super::validate::FieldError;

/// Why a body may not leave the machine.
#[derive(Debug, Error)]
pub enum GateError {
    /// The body is not a record.
    #[error("not a record: {0}")]
    NotARecord(#[from] ParseError),
    /// A header value is refused (an invisible character in a name, a line break, ...).
    #[error("{0}")]
    Invalid(#[from] BuildError),
    /// A header value holds a secret; headers are never scrubbed.
    #[error("{0}")]
    Secret(FieldError),
    /// The redacted record could not be rendered again.
    #[error("the redacted record cannot be rendered: {0}")]
    Render(#[from] RenderError),
    /// Even rendered again, the body holds the forge token in use.
    #[error("it holds the forge token in use")]
    HoldsToken,
}

/// Checks `body` on its way out: it must parse as a valid record, and it leaves with every secret
/// `redactor` finds replaced (the body rendered again by `renderer`, with its `Redacted:` count
/// raised). A clean body comes back borrowed, unchanged.
pub fn outbound<'a>(
    body: &'a str,
    redactor: &Redactor,
    renderer: &Renderer,
) -> Result<Cow<'a, str>, GateError> {
    let mut record = parse(body)?;
    record.check()?;
    let found = redactor
        .redact_record(&mut record)
        .map_err(GateError::Secret)?;
    // Text the record does not hold (after the fence, say) is checked too: anything found there
    // means the body is rendered again from the record alone.
    let mut copy = body.to_string();
    let out = match found == 0 && redactor.redact_text(&mut copy) == 0 {
        true => Cow::Borrowed(body),
        false => Cow::Owned(renderer.render(&record)?),
    };
    match redactor.holds_secret(&out) {
        true => Err(GateError::HoldsToken),
        false => Ok(out),
    }
}
