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

#[cfg(test)]
mod tests {
    use super::super::{Kind, Renderer, parse};
    use super::*;
    use serde_json::json;

    #[test]
    fn a_takeover_round_trips_and_names_its_owner_origin_and_poster() {
        let from = super::super::new_record_id();
        let record = Record::takeover(
            "implementation-worker",
            "s1",
            "w-next",
            Some(from.clone()),
            Some("w-supervisor".into()),
        )
        .unwrap()
        .with_parent(Some(from.clone()));
        let body = Renderer::embedded().unwrap().render(&record).unwrap();
        assert!(
            body.starts_with("[TAKEOVER] implementation-worker\n"),
            "{body}"
        );
        assert!(body.contains("\nWriter: w-next\n"), "{body}");
        assert!(body.contains(&format!("\nFrom: {from}\n")), "{body}");
        assert!(body.contains("\nBy: w-supervisor\n"), "{body}");
        assert!(
            !body.contains("[CHECKPOINT]"),
            "seed 003 takes it for a checkpoint"
        );
        let back = parse(&body).unwrap();
        assert_eq!(back.kind(), Kind::Takeover);
        assert_eq!(back.new_owner(), Some("w-next"));
        assert_eq!(back.taken_from(), Some(from.as_str()));
        let mut expected = record.clone();
        expected.time = back.time;
        assert_eq!(back, expected);
    }

    #[test]
    fn a_takeover_by_its_owner_names_no_poster_and_needs_a_writer() {
        let r = Record::takeover("a", "s", "w1", None, Some("w1".into())).unwrap();
        assert!(matches!(
            r.payload,
            Payload::Takeover {
                by: None,
                from: None
            }
        ));
        assert!(Record::takeover("a", "s", "two\nlines", None, None).is_err());
        let mut no_owner = r.clone();
        no_owner.writer = None;
        assert_eq!(no_owner.check(), Err(BuildError::NoWriter));
        let body = Renderer::embedded().unwrap().render(&r).unwrap();
        let cut = body.replace("Writer: w1\n", "");
        let e = parse(&cut).unwrap_err();
        assert_eq!(e.code(), "missing_field", "{e}");
    }

    #[test]
    fn every_kind_carries_its_writer_and_records_without_one_still_read() {
        let renderer = Renderer::embedded().unwrap();
        for record in [
            Record::checkpoint("a", "s", "p", json!({"k": 1})).unwrap(),
            Record::health("a", "s", "Active", json!({}), Some("soon")).unwrap(),
            Record::end("a", "s", "completed", Some("done")).unwrap(),
        ] {
            let with = record.clone().with_writer(Some("cli-1a2b".into()));
            let body = renderer.render(&with).unwrap();
            assert!(body.contains("\nWriter: cli-1a2b\n"), "{body}");
            assert_eq!(parse(&body).unwrap().writer.as_deref(), Some("cli-1a2b"));
            let body = renderer.render(&record).unwrap();
            assert!(!body.contains("Writer:"), "{body}");
            assert_eq!(parse(&body).unwrap().writer, None);
        }
    }
}
