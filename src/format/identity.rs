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

    /// Whether `self` and `other` are the same record ([`Record::identity`]).
    pub fn same_record(&self, other: &Record) -> bool {
        self.identity() == other.identity()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seed() -> Record {
        let mut r = Record::checkpoint("a", "s", "p", json!({"k": 1, "j": [1, 2]})).unwrap();
        r.id = None;
        r
    }

    #[test]
    fn a_copy_is_the_same_record_and_a_changed_one_is_not() {
        let original = seed();
        let copy = original.clone().carried(3);
        assert!(original.same_record(&copy));
        let mut later = original.clone();
        later.time += chrono::Duration::microseconds(1);
        assert!(!original.same_record(&later));
        let other = Record {
            id: None,
            ..Record::checkpoint("a", "s", "p", json!({"k": 2, "j": [1, 2]})).unwrap()
        };
        let mut other = other;
        other.time = original.time;
        assert!(!original.same_record(&other));
        let mut named = original.clone();
        named.id = Some("01a232d2-6f5a-743e-b1a3-fe4349829487".into());
        assert!(
            !original.same_record(&named),
            "an Id decides when there is one"
        );
    }

    #[test]
    fn nanoseconds_a_body_cannot_hold_do_not_count() {
        let mut a = seed();
        a.time = chrono::DateTime::from_timestamp(1_764_000_000, 123_456_789).unwrap();
        let mut b = a.clone();
        b.time = chrono::DateTime::from_timestamp(1_764_000_000, 123_456_000).unwrap();
        assert!(a.same_record(&b));
    }
}
