//! What the reader's signing keys made of each record the mirror keeps ([`Sig`]), and what the
//! verdicts are keyed by. With them and the comment id of the thread's first signed record
//! (`slot::first_signed`, kept in the summary too), a warm read checks the signatures of new
//! and changed comments only, and places an unsigned record (believed before the first signed
//! one, refused after it) without the rest of the thread.

use serde::{Deserialize, Serialize};

use crate::scan::{Checked, Verifier};

/// A record's signature as the reader's keys found it, before the thread's order places an
/// unsigned one ([`crate::scan::gated`]). It is a function of the body and the keys, so the
/// mirror keeps it, keyed by [`Verifier::name`], and checks only new and changed comments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Sig {
    /// Validly signed.
    Ok,
    /// No signature line (unsigned records allowed).
    No,
    /// Not believed, with why.
    Bad(String),
}

impl Sig {
    pub(super) fn of(checked: Checked) -> Sig {
        match checked {
            Checked::Believed => Sig::Ok,
            Checked::Unsigned => Sig::No,
            Checked::Refused(why) => Sig::Bad(why),
        }
    }

    pub(super) fn checked(&self) -> Checked {
        match self {
            Sig::Ok => Checked::Believed,
            Sig::No => Checked::Unsigned,
            Sig::Bad(why) => Checked::Refused(why.clone()),
        }
    }
}

/// What a mirror's verdicts are keyed by (`None`: built without signing keys).
pub(super) fn name(verify: Option<&Verifier>) -> Option<String> {
    verify.map(Verifier::name)
}
