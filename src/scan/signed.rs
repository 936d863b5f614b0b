//! What a reader's signature check makes of each record, and the warnings that sum it up.
//!
//! With signing keys configured, a record without a signature line is either refused or, when
//! unsigned records are allowed (`[signing] require_signatures = false`, the default), believed
//! if it was posted before the thread's first validly signed record: turning signing on for a
//! thread that already exists keeps its history readable. Such records are marked
//! [`CommentInfo::unsigned`] and summed up in one warning; an unsigned record posted after the
//! first signed one is still refused (signing was on by then). Pure.

use super::{CommentInfo, Rejected, Rejection};
use crate::format::{SigningKey, Verdict, verify};

/// What a reader's signature check says of one record's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Believed: validly signed, or no signing keys are configured.
    Believed,
    /// No signature line, and unsigned records are allowed: believed only when posted before
    /// the thread's first signed record.
    Unsigned,
    /// Not believed, with why.
    Refused(String),
}

/// The reason an unsigned record is refused.
pub(crate) const NO_SIGNATURE: &str = "it carries no signature";

/// A reader's signature check: its keys, and whether unsigned records are refused outright.
#[derive(Debug, Clone)]
pub(crate) struct Verifier {
    keys: Vec<SigningKey>,
    require: bool,
}

impl Verifier {
    /// The check with `keys` (`None` without keys: every record is believed).
    pub(crate) fn new(keys: &[SigningKey], require: bool) -> Option<Verifier> {
        (!keys.is_empty()).then(|| Verifier {
            keys: keys.to_vec(),
            require,
        })
    }

    /// What the keys make of a body (before [`Gate`] places an unsigned one).
    pub(crate) fn check(&self, body: &str) -> Checked {
        match verify(body, &self.keys) {
            Verdict::Missing if !self.require => Checked::Unsigned,
            verdict => verdict
                .problem()
                .map_or(Checked::Believed, Checked::Refused),
        }
    }

    /// What a cache of verdicts is keyed by: the key ids (not secret: signatures name them)
    /// and whether signatures are required. Another key, or the setting changed, is another
    /// name, and the cached verdicts are not used.
    pub(crate) fn name(&self) -> String {
        let mut ids: Vec<&str> = self.keys.iter().map(SigningKey::id).collect();
        ids.sort_unstable();
        ids.dedup();
        let required = if self.require { " required" } else { "" };
        format!("hmac-sha256 {}{required}", ids.join(","))
    }
}

/// Decides unsigned records in comment id order: believed (and marked) until the first signed
/// one, refused after it.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    signed_seen: bool,
}

impl Gate {
    /// `None` when the record is believed (marking `info` when it is unsigned), else why not.
    pub(crate) fn decide(&mut self, checked: Checked, info: &mut CommentInfo) -> Option<String> {
        if checked == Checked::Believed {
            self.signed_seen = true;
        }
        gated(checked, self.signed_seen, info)
    }
}

/// [`Gate::decide`] for one record, given whether a validly signed record comes before it in
/// comment id order (the read cache keeps where the first one is).
pub(crate) fn gated(
    checked: Checked,
    signed_before: bool,
    info: &mut CommentInfo,
) -> Option<String> {
    match checked {
        Checked::Believed => None,
        Checked::Unsigned if !signed_before => {
            info.unsigned = true;
            None
        }
        Checked::Unsigned => Some(format!(
            "{NO_SIGNATURE}, and it was posted after the thread's first signed record"
        )),
        Checked::Refused(why) => Some(why),
    }
}

/// The one warning for `n` believed records that carry no signature (`None` when `n` is 0).
pub(crate) fn unsigned_count_warning(n: usize) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "{n} record(s) carry no signature: they were posted before the thread's first signed \
             record and are believed, marked `unsigned`; set `[signing] require_signatures = \
             true` to refuse them"
        )
    })
}

/// The warnings for trusted authors' records not believed: one each, except the records that
/// only lack a signature, summed up in one.
pub(crate) fn not_believed_warnings(rejected: &[Rejected]) -> Vec<String> {
    let unsigned: Vec<&Rejected> = rejected
        .iter()
        .filter(|r| matches!(&r.code, Rejection::NotBelieved { reason } if reason == NO_SIGNATURE))
        .collect();
    let mut out: Vec<String> = rejected
        .iter()
        .filter(|r| unsigned.len() < 2 || !unsigned.iter().any(|u| std::ptr::eq(*u, *r)))
        .filter_map(super::not_believed_warning)
        .collect();
    if unsigned.len() >= 2 {
        let ids: Vec<String> = unsigned
            .iter()
            .filter_map(|r| r.comment.id)
            .map(|id| id.to_string())
            .collect();
        out.push(format!(
            "{} records are not believed: {NO_SIGNATURE} (comments {}; `[signing] \
             require_signatures = true`); answering from the newest record whose signature is \
             valid",
            unsigned.len(),
            ids.join(", ")
        ));
    }
    out
}
