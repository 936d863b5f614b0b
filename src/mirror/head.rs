//! A record's header as the mirror keeps it in memory and in the base's index: the fields every
//! record has inline, the ones most records leave out boxed apart ([`More`]), so a cold read of a
//! long thread holds a small header per record. On disk it is one flat JSON object either way.

mod recent;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use self::recent::{Field, shared};
use super::sig::Sig;
use crate::format::{Intent, Kind, Payload, Record};

/// A time as `[seconds, nanoseconds]`: much cheaper to read back than RFC 3339 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp(pub DateTime<Utc>);

impl Serialize for Stamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.0.timestamp(), self.0.timestamp_subsec_nanos()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Stamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Stamp, D::Error> {
        let (secs, nanos) = <(i64, u32)>::deserialize(d)?;
        DateTime::from_timestamp(secs, nanos)
            .map(Stamp)
            .ok_or_else(|| serde::de::Error::custom("time out of range"))
    }
}

/// A record's header: everything but its data or metrics. The version, agent and session are
/// shared with the other headers of this thread that name the same ([`recent`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "Wire")]
pub(super) struct Head {
    v: Arc<str>,
    pub id: Option<String>,
    pub p: Option<String>,
    g: Arc<str>,
    s: Arc<str>,
    t: Stamp,
    k: KindHead,
    /// What the reader's signing keys made of the comment (`None`: read without keys).
    pub z: Option<Sig>,
    /// The fields most records leave out (`None`: all of them).
    more: Option<Box<More>>,
}

/// The header fields most records leave out.
#[derive(Debug, Clone, Default, PartialEq)]
struct More {
    q: Option<u64>,
    r: Option<u64>,
    n: Option<String>,
    x: Vec<String>,
    h: Option<String>,
    f: Option<u64>,
    o: Option<Stamp>,
    e: Option<Stamp>,
    it: Option<Intent>,
    d: Option<String>,
    w: Option<String>,
}

/// The kind-specific part of a header (a phase or a status shared as [`recent`] shares them).
#[derive(Debug, Clone)]
enum KindHead {
    /// A checkpoint's phase.
    C(Arc<str>),
    /// A health report's status and next check.
    H(Arc<str>, Option<String>),
    /// An end record's reason and note.
    E(String, Option<String>),
    /// A takeover's `From:` and `By:`.
    T(Option<String>, Option<String>),
}

/// [`KindHead`] as it is on disk: read owned ([`KindWire`]), written borrowed ([`KindRef`]).
#[derive(Serialize, Deserialize)]
enum KindOf<S, O> {
    C(S),
    H(S, Option<O>),
    E(S, Option<O>),
    T(Option<O>, Option<O>),
}

type KindWire = KindOf<String, String>;
type KindRef<'a> = KindOf<&'a str, &'a String>;

impl KindHead {
    fn of(wire: KindWire) -> KindHead {
        match wire {
            KindOf::C(phase) => KindHead::C(shared(Field::Phase, phase)),
            KindOf::H(status, next) => KindHead::H(shared(Field::Status, status), next),
            KindOf::E(reason, note) => KindHead::E(reason, note),
            KindOf::T(from, by) => KindHead::T(from, by),
        }
    }

    fn wire(&self) -> KindRef<'_> {
        match self {
            KindHead::C(phase) => KindOf::C(phase),
            KindHead::H(status, next) => KindOf::H(status, next.as_ref()),
            KindHead::E(reason, note) => KindOf::E(reason, note.as_ref()),
            KindHead::T(from, by) => KindOf::T(from.as_ref(), by.as_ref()),
        }
    }
}

/// A header as it is on disk, one flat object: read owned ([`Wire`]), written borrowed
/// ([`WireRef`]), the same fields in the same order.
#[derive(Serialize, Deserialize)]
#[serde(bound(
    deserialize = "S: Deserialize<'de>, O: Deserialize<'de>, X: Deserialize<'de>, \
                   I: Deserialize<'de>, Z: Deserialize<'de>"
))]
struct WireOf<S, O, X: AsRef<[String]> + Default, I, Z> {
    v: S,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<O>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    q: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<O>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<u64>,
    /// The handoff's next step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<O>,
    /// The handoff's blockers.
    #[serde(default, skip_serializing_if = "no_items")]
    x: X,
    /// The context hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    h: Option<O>,
    /// The session issue a rotation carried the record from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    f: Option<u64>,
    /// When the record was first posted (`Posted-At:`), on a carried record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    o: Option<Stamp>,
    /// When the comment a carried record came from had been edited (`Edited-At:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e: Option<Stamp>,
    /// The write-ahead intent, on a checkpoint (small: kept in the header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    it: Option<I>,
    /// The intent a checkpoint confirms (`Done:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    d: Option<O>,
    /// The writer (`Writer:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    w: Option<O>,
    g: S,
    s: S,
    t: Stamp,
    k: KindOf<S, O>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    z: Option<Z>,
}

type Wire = WireOf<String, String, Vec<String>, Intent, Sig>;
type WireRef<'a> = WireOf<&'a str, &'a String, &'a [String], &'a Intent, &'a Sig>;

fn no_items<X: AsRef<[String]>>(x: &X) -> bool {
    x.as_ref().is_empty()
}

impl From<Wire> for Head {
    fn from(w: Wire) -> Head {
        let more = More {
            q: w.q,
            r: w.r,
            n: w.n,
            x: w.x,
            h: w.h,
            f: w.f,
            o: w.o,
            e: w.e,
            it: w.it,
            d: w.d,
            w: w.w,
        };
        Head {
            v: shared(Field::Version, w.v),
            id: w.id,
            p: w.p,
            g: shared(Field::Agent, w.g),
            s: shared(Field::Session, w.s),
            t: w.t,
            k: KindHead::of(w.k),
            z: w.z,
            more: (more != More::default()).then(|| Box::new(more)),
        }
    }
}

impl Serialize for Head {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let none = More::default();
        let m = self.more.as_deref().unwrap_or(&none);
        WireRef {
            v: &self.v,
            id: self.id.as_ref(),
            q: m.q,
            p: self.p.as_ref(),
            r: m.r,
            n: m.n.as_ref(),
            x: &m.x,
            h: m.h.as_ref(),
            f: m.f,
            o: m.o,
            e: m.e,
            it: m.it.as_ref(),
            d: m.d.as_ref(),
            w: m.w.as_ref(),
            g: &self.g,
            s: &self.s,
            t: self.t,
            k: self.k.wire(),
            z: self.z.as_ref(),
        }
        .serialize(s)
    }
}

impl Head {
    /// When the comment a carried record came from had been edited (`Edited-At:`).
    pub fn edited_at(&self) -> Option<Stamp> {
        self.more.as_ref().and_then(|m| m.e)
    }

    /// What the thread's ordering rule needs of this record ([`crate::scan::Place`]).
    pub fn posting(&self) -> crate::scan::Posting {
        crate::scan::Posting {
            first: self.more.as_ref().and_then(|m| m.o).map(|s| s.0),
            id: self.id.clone(),
            // Without an `Id`, the payload decides too: `Slot::posting_in` fills it in.
            same: None,
            parent: self.p.clone(),
            time: Some(self.t.0),
        }
    }

    /// Whether the record is a takeover.
    pub fn is_takeover(&self) -> bool {
        matches!(self.k, KindHead::T(..))
    }

    /// The record's kind and agent, as its marker line names them.
    pub fn marker(&self) -> (Kind, String) {
        (self.kind(), self.g.to_string())
    }

    /// The record's kind (as [`Record::kind`] says it), without making the record.
    pub fn kind(&self) -> Kind {
        match self.k {
            KindHead::C(..) => Kind::Checkpoint,
            KindHead::H(..) => Kind::Health,
            KindHead::E(..) => Kind::End,
            KindHead::T(..) => Kind::Takeover,
        }
    }

    /// The record's agent (shared: `head/recent.rs`).
    pub fn agent(&self) -> &Arc<str> {
        &self.g
    }

    /// The record's session (shared).
    pub fn session(&self) -> &Arc<str> {
        &self.s
    }

    /// A record as its header and its data (or metrics).
    pub(super) fn split(record: Record) -> (Head, Value) {
        let (k, data) = match record.payload {
            Payload::Checkpoint { phase, data } => (KindOf::C(phase), data),
            Payload::Health {
                status,
                metrics,
                next_check,
            } => (KindOf::H(status, next_check), metrics),
            Payload::End { reason, note } => (KindOf::E(reason, note), Value::Null),
            Payload::Takeover { from, by } => (KindOf::T(from, by), Value::Null),
        };
        let head = Head::from(Wire {
            v: record.version,
            id: record.id,
            q: record.seq,
            p: record.parent,
            r: record.redacted,
            n: record.next,
            x: record.blockers,
            h: record.context_hash,
            f: record.carried_from,
            o: record.posted_at.map(Stamp),
            e: record.edited_at.map(Stamp),
            it: record.intent,
            d: record.done,
            w: record.writer,
            g: record.agent,
            s: record.session,
            t: Stamp(record.time),
            k,
            z: None,
        });
        (head, data)
    }

    /// The record, with `data` as its data (or metrics).
    pub fn record(&self, data: Value) -> Record {
        let payload = match &self.k {
            KindHead::C(phase) => Payload::Checkpoint {
                phase: phase.to_string(),
                data,
            },
            KindHead::H(status, next_check) => Payload::Health {
                status: status.to_string(),
                metrics: data,
                next_check: next_check.clone(),
            },
            KindHead::E(reason, note) => Payload::End {
                reason: reason.clone(),
                note: note.clone(),
            },
            KindHead::T(from, by) => Payload::Takeover {
                from: from.clone(),
                by: by.clone(),
            },
        };
        let none = More::default();
        let m = self.more.as_deref().unwrap_or(&none);
        Record {
            version: self.v.to_string(),
            id: self.id.clone(),
            seq: m.q,
            parent: self.p.clone(),
            writer: m.w.clone(),
            redacted: m.r,
            next: m.n.clone(),
            blockers: m.x.clone(),
            context_hash: m.h.clone(),
            carried_from: m.f,
            posted_at: m.o.map(|s| s.0),
            edited_at: m.e.map(|s| s.0),
            intent: m.it.clone(),
            done: m.d.clone(),
            agent: self.g.to_string(),
            session: self.s.to_string(),
            time: self.t.0,
            payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;
    use serde_json::json;

    fn round_trip(record: &Record) -> (Head, Record) {
        let (head, data) = Head::split(record.clone());
        let text = serde_json::to_string(&head).unwrap();
        let back: Head = serde_json::from_str(&text).unwrap();
        (back.clone(), back.record(data))
    }

    #[test]
    fn a_plain_record_keeps_no_box_of_rare_fields_and_reads_back_whole() {
        let record = Record::checkpoint("w", "s", "clone_complete", json!({"n": 1})).unwrap();
        let (head, back) = round_trip(&record);
        assert!(head.more.is_none(), "nothing rare to keep");
        assert_eq!(back, record);
    }

    #[test]
    fn kinds_keep_the_layout_earlier_mirrors_wrote_and_share_their_phase() {
        let one = Record::checkpoint("w", "s", "clone_complete", json!({"n": 1})).unwrap();
        let two = Record::checkpoint("w", "s", "clone_complete", json!({"n": 2})).unwrap();
        let (a, _) = Head::split(one);
        let (b, _) = Head::split(two);
        assert_eq!(
            serde_json::to_value(&a).unwrap()["k"],
            json!({"C": "clone_complete"})
        );
        match (&a.k, &b.k) {
            (KindHead::C(x), KindHead::C(y)) => assert!(Arc::ptr_eq(x, y), "one copy"),
            _ => panic!("checkpoints"),
        }
        assert!(Arc::ptr_eq(&a.g, &b.g) && Arc::ptr_eq(&a.s, &b.s));
        let health = Record::health("w", "s", "Active", json!({}), Some("soon")).unwrap();
        let (h, _) = Head::split(health.clone());
        assert_eq!(
            serde_json::to_value(&h).unwrap()["k"],
            json!({"H": ["Active", "soon"]})
        );
        let (_, back) = round_trip(&health);
        assert_eq!(back, health);
        let old: Head = serde_json::from_value(json!({
            "v": "1", "g": "w", "s": "s", "t": [0, 0], "k": {"E": ["done", null]}
        }))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&old).unwrap()["k"],
            json!({"E": ["done", null]})
        );
    }

    #[test]
    fn every_rare_field_reads_back_and_the_file_stays_one_flat_object() {
        let mut record = Record::checkpoint("w", "s", "clone_complete", json!({"n": 1}))
            .unwrap()
            .with_lineage(Some(3), Some("parent-id".into()));
        record.next = Some("open the PR".into());
        record.blockers = vec!["CI is red".into()];
        record.carried_from = Some(7);
        record.posted_at = DateTime::from_timestamp(1_700_000_000, 5);
        record.edited_at = DateTime::from_timestamp(1_700_000_100, 0);
        record.redacted = Some(2);
        record.done = Some("intent-1".into());
        let (head, back) = round_trip(&record);
        assert!(head.more.is_some());
        assert_eq!(back, record);
        // The layout on disk is the flat one earlier mirrors wrote.
        let flat: Value = serde_json::to_value(&head).unwrap();
        for key in [
            "v", "q", "p", "r", "n", "x", "f", "o", "e", "d", "g", "s", "t", "k",
        ] {
            assert!(flat.get(key).is_some(), "{key} in {flat}");
        }
    }
}
