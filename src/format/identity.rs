//! Which records are the same record, the one rule every read and the import use: by `Id` when
//! the record has one; without one (seed 003's client writes none), by its kind, agent,
//! session, time (to the microsecond a body holds) and payload. So a copy of an `Id`-less
//! record (one a rotation or an import posted again, with `Carried-From:`/`Posted-At:` lines
//! that are not part of it) counts once, like a copy with an `Id`.

use chrono::SubsecRound;
use sha2::{Digest, Sha256};

use super::record::Record;

/// What makes a record the same record as another ([`Record::identity`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Identity {
    /// Its `Id`.
    Id(String),
    /// A record without an `Id`: the SHA-256 of its kind, agent, session, time and payload.
    Same([u8; 32]),
}

impl Record {
    /// What makes this record the same record as another: see the module documentation.
    pub fn identity(&self) -> Identity {
        match &self.id {
            Some(id) => Identity::Id(id.clone()),
            None => Identity::Same(self.sameness()),
        }
    }

    /// The digest that stands for this record's kind, agent, session, time and payload. Each
    /// part is length-prefixed, so no two different records share the bytes hashed; the payload
    /// is its JSON, whose objects serialize in one order (sorted keys).
    pub(crate) fn sameness(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        let micros = self.time.trunc_subsecs(6).timestamp_micros();
        let payload = serde_json::to_vec(&self.payload).unwrap_or_default();
        for part in [
            self.kind().name().as_bytes(),
            self.agent.as_bytes(),
            self.session.as_bytes(),
            &micros.to_be_bytes(),
            &payload,
        ] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        h.finalize().into()
    }
}

impl Record {
    /// Whether `other`, a record of the same [`Identity`], says what this one says: equal but
    /// for the lines a copy adds (`Carried-From:`, `Posted-At:`, `Edited-At:`). Two comments
    /// holding one `Id` that say different things mean one of them was edited (an `Id:` line
    /// set to another record's, say); an exact copy (the outbox posting a record twice, a
    /// carried copy) says the same.
    pub fn says_the_same(&self, other: &Record) -> bool {
        let bare = |r: &Record| Record {
            carried_from: None,
            posted_at: None,
            edited_at: None,
            ..r.clone()
        };
        bare(self) == bare(other)
    }
}
