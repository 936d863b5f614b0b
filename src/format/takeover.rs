//! The takeover record (`[TAKEOVER]`): a writer now owns an agent's session, from a given
//! record. Its layout keeps seed 003's parser blind to it (no `[CHECKPOINT]` anywhere in it);
//! what it means for readers, the fencing rule, lives in `crate::scan::fence`.

use super::record::{BuildError, Payload, Record};
use super::validate::check_field;

impl Record {
    /// A new version-2.0 takeover stamped now: `writer` owns the session of `agent` from here
    /// on, continuing from the record `from` (the session's newest unfenced record; `None` for a
    /// session with none). `by` is the writer posting it on the owner's behalf, when another.
    pub fn takeover(
        agent: &str,
        session: &str,
        writer: &str,
        from: Option<String>,
        by: Option<String>,
    ) -> Result<Record, BuildError> {
        check_field("writer", writer)?;
        for (name, value) in [("from", &from), ("by", &by)] {
            if let Some(v) = value {
                check_field(name, v)?;
            }
        }
        let by = by.filter(|b| b != writer);
        let record = Record::stamped(agent, session, Payload::Takeover { from, by })?;
        Ok(record.with_writer(Some(writer.to_string())))
    }

    /// The writer a takeover hands the session to, for a takeover record.
    pub fn new_owner(&self) -> Option<&str> {
        match self.payload {
            Payload::Takeover { .. } => self.writer.as_deref(),
            _ => None,
        }
    }

    /// The record a takeover continues from (`From:`), for a takeover record.
    pub fn taken_from(&self) -> Option<&str> {
        match &self.payload {
            Payload::Takeover { from, .. } => from.as_deref(),
            _ => None,
        }
    }
}
