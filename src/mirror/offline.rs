//! The mirror as it is, without asking the store: what `resume`, `latest`, `list` and `status`
//! answer from when the forge cannot be read (flagged `offline`).
//!
//! Only a mirror built for these trusted authors is used (the configured ones, plus the token's
//! own login when the mirror remembers it for this token); anything else is no answer, and the
//! caller falls back to the outbox alone.

use std::collections::BTreeSet;

use super::merge::merge;
use super::{Mirror, View, sig};
use crate::scan::{Trust, Verifier};

impl Mirror {
    /// The view of the mirror on disk, or `None` when there is none usable for `trusted`.
    pub(crate) fn read_offline(
        &self,
        trusted: &BTreeSet<String>,
        verify: Option<&Verifier>,
    ) -> Option<View> {
        let mut warnings = Vec::new();
        let loaded = self.load(&mut warnings);
        let (header, base, data) = loaded.base?;
        if header.signing != sig::name(verify) {
            tracing::debug!("the read cache was built for other signing keys");
            return None;
        }
        let (_, _, login) = self.cached_login(loaded.salt.clone(), &loaded.login);
        let trust = match &header.trust {
            None => Trust::Everyone,
            Some(list) => {
                let set: BTreeSet<String> = list.iter().cloned().collect();
                let mut expected = trusted.clone();
                expected.extend(login);
                let same = match expected.len() > trusted.len() {
                    // The login is known: exactly the configured authors and it.
                    true => set == expected,
                    // Unknown: the configured authors and one more (the login it was built with).
                    false => trusted.is_subset(&set) && set.len() <= trusted.len() + 1,
                };
                if !same {
                    tracing::debug!("the read cache was built for other trusted authors");
                    return None;
                }
                Trust::Only(set)
            }
        };
        let slots = match &loaded.delta {
            Some(delta) => merge(&base, &delta.slots),
            None => base,
        };
        warnings.extend(header.warnings.iter().cloned());
        Some(View {
            first_signed: super::slot::first_signed(&slots),
            unsigned: None,
            slots,
            data: Some(data),
            trust,
            warnings,
            extra: Vec::new(),
            index: None,
            known: Vec::new(),
            incomplete: header.incomplete,
        })
    }
}
