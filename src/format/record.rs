//! The record types: what a `[CHECKPOINT]` or `[HEALTH]` comment means, independent of how it is
//! written down.
//!
//! Deriving `Serialize` here is a compatibility promise: this is the JSON that `--json` prints and
//! that later caches will store. Add fields; never rename them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::names::nfc;
use super::session::{END_REASONS, Intent};
use super::time::{format_time, now_micros, parse_time};
use super::validate::{FieldError, check_field, check_name, check_new_name, check_unmarked};

/// The version written by this crate.
pub const WRITE_VERSION: &str = "2.0";
/// The version the seed's Python agents write (and assumed when a body has no `Version:` line).
pub const SEED_VERSION: &str = "1.0";

/// Which of the record kinds a comment holds: in records, in the requests that filter by kind,
/// and (with the `cli` feature) as the `--kind` flag's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `[CHECKPOINT]`: a phase reached, with the state to resume from.
    #[cfg_attr(feature = "cli", value(help = "[CHECKPOINT] records"))]
    Checkpoint,
    /// `[HEALTH]`: a status report with metrics.
    #[cfg_attr(feature = "cli", value(help = "[HEALTH] records"))]
    Health,
    /// `[END]`: the session stopped, and why (see [`END_REASONS`]).
    #[cfg_attr(feature = "cli", value(help = "[END] records"))]
    End,
    /// `[TAKEOVER]`: a writer took the agent's session over; other writers' later records of
    /// the session are fenced (see [`crate::scan::fence`]).
    #[cfg_attr(feature = "cli", value(help = "[TAKEOVER] records"))]
    Takeover,
}

impl Kind {
    /// Every kind, in the order a marker line is tried.
    pub(crate) const ALL: [Kind; 4] = [Kind::Checkpoint, Kind::Health, Kind::End, Kind::Takeover];

    /// The marker that opens the comment, e.g. `[CHECKPOINT]`.
    pub fn marker(self) -> &'static str {
        match self {
            Kind::Checkpoint => "[CHECKPOINT]",
            Kind::Health => "[HEALTH]",
            Kind::End => "[END]",
            Kind::Takeover => "[TAKEOVER]",
        }
    }

    /// The lowercase name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Checkpoint => "checkpoint",
            Kind::Health => "health",
            Kind::End => "end",
            Kind::Takeover => "takeover",
        }
    }
}

/// One parsed or to-be-written record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Record {
    /// `1.0` for the seed's records, `2.0` for ours; later versions are read best-effort.
    pub version: String,
    /// Unique record id (UUIDv7) used for idempotency and dedupe; absent on version 1.0 records.
    pub id: Option<String>,
    /// Optional position of this record in its agent's sequence.
    pub seq: Option<u64>,
    /// Optional id of the record this one follows.
    pub parent: Option<String>,
    /// The writer that wrote it (`Writer:`): one lineage of writes (a machine's CLI, one Python
    /// `Client`, one MCP server process, one LangGraph saver). `None` on records of the seed's
    /// clients and of older versions, which are never fenced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<String>,
    /// How many values were replaced by `[REDACTED]` before writing, when any were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<u64>,
    /// Handoff (`Next:`): the next step, in words, for whoever picks the work up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Handoff (one `Blocker:` line each): what stands in the way, for a human to clear.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blockers: Vec<String>,
    /// `Context-Hash:` (`sha256:` and 16 hex digits) of the context file the agent worked from,
    /// so a resume can tell whether that file changed since (see [`context_hash`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_hash: Option<String>,
    /// The session issue this record was carried forward from by a rotation
    /// (`Carried-From: #12`); the record keeps its `Id`, so readers count it once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_from: Option<u64>,
    /// A write-ahead intent (`Intent:`, on a checkpoint): a side effect about to happen, pending
    /// until a later checkpoint of the session confirms it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// The intent this checkpoint confirms explicitly (`Done:`); any later checkpoint of the
    /// session confirms an earlier intent anyway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// When the record's first comment was posted, by the store's clock (`Posted-At:`), set when
    /// the record is carried to another issue: ages (`status`, `history`) come from it, so a
    /// carried copy never makes a silent agent look recently active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub posted_at: Option<DateTime<Utc>>,
    /// When the comment this record was carried from had been edited after posting
    /// (`Edited-At:`), set by a carry of an edited record: the copy is a fresh comment, and this
    /// line keeps it flagged as edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub edited_at: Option<DateTime<Utc>>,
    /// The agent that wrote it (`implementation-worker`).
    pub agent: String,
    /// The session it belongs to.
    pub session: String,
    /// When it was written (whole seconds, UTC).
    #[serde(serialize_with = "ser_time", deserialize_with = "de_time")]
    #[schemars(with = "String")]
    pub time: DateTime<Utc>,
    /// What kind of record it is, with its kind-specific fields.
    #[serde(flatten)]
    pub payload: Payload,
}

/// The kind-specific part of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Payload {
    /// A checkpoint.
    Checkpoint {
        /// The phase reached (`clone_complete`).
        phase: String,
        /// The state data. Always an object when we write it; read as whatever JSON was there.
        data: Value,
    },
    /// A health report.
    Health {
        /// The status (`Active`, `Blocked`, ...).
        status: String,
        /// The metrics object.
        metrics: Value,
        /// When the next report is due, as written.
        next_check: Option<String>,
    },
    /// The end of a session.
    End {
        /// Why it ended: one of [`END_REASONS`] when we write it.
        reason: String,
        /// An optional note, in words.
        note: Option<String>,
    },
    /// A takeover: the record's writer owns the agent's session from here on.
    Takeover {
        /// The record the new owner continues from (`From:`), the session's newest unfenced
        /// record when it was taken over; `None` for a session with no record yet.
        from: Option<String>,
        /// The writer that posted the takeover on the new owner's behalf (`By:`), when it is
        /// not the new owner itself (a supervisor preparing the next worker).
        by: Option<String>,
    },
}

/// Why a record could not be built for writing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// A header value was refused.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// An end reason outside [`END_REASONS`].
    #[error("the end reason {reason:?} is not one of {}; pick one of them", END_REASONS.join(", "), reason = .0)]
    BadReason(String),
    /// A takeover without the writer that takes the session over.
    #[error("a takeover must name its writer (the new owner of the session)")]
    NoWriter,
    /// An intent or a confirmation on a record that is not a checkpoint.
    #[error("only a checkpoint can carry an intent or confirm one")]
    NotCheckpoint,
    /// A value that must be a JSON object was not.
    #[error("{what} must be a JSON object, not {found}; wrap the value as {{\"key\": ...}}")]
    NotAnObject {
        /// Which value (`data`, `metrics`).
        what: &'static str,
        /// What it was instead (`an array`).
        found: &'static str,
    },
}

impl Record {
    /// A new version-2.0 checkpoint stamped now with a fresh id.
    pub fn checkpoint(
        agent: &str,
        session: &str,
        phase: &str,
        data: Value,
    ) -> Result<Record, BuildError> {
        check_field("phase", phase)?;
        require_object("data", &data)?;
        Record::stamped(
            agent,
            session,
            Payload::Checkpoint {
                phase: phase.to_string(),
                data,
            },
        )
    }

    /// A new version-2.0 health signal stamped now with a fresh id.
    pub fn health(
        agent: &str,
        session: &str,
        status: &str,
        metrics: Value,
        next_check: Option<&str>,
    ) -> Result<Record, BuildError> {
        check_unmarked("status", status)?;
        if let Some(next) = next_check {
            check_unmarked("next check", next)?;
        }
        require_object("metrics", &metrics)?;
        Record::stamped(
            agent,
            session,
            Payload::Health {
                status: status.to_string(),
                metrics,
                next_check: next_check.map(str::to_string),
            },
        )
    }

    pub(super) fn stamped(
        agent: &str,
        session: &str,
        payload: Payload,
    ) -> Result<Record, BuildError> {
        // One name, however its accents were typed (NFC), and none that passes for another.
        let (agent, session) = (nfc(agent), nfc(session));
        check_new_name("agent", &agent)?;
        check_new_name("session", &session)?;
        Ok(Record {
            version: WRITE_VERSION.to_string(),
            id: Some(new_record_id()),
            seq: None,
            parent: None,
            writer: None,
            redacted: None,
            next: None,
            blockers: Vec::new(),
            context_hash: None,
            carried_from: None,
            edited_at: None,
            intent: None,
            done: None,
            posted_at: None,
            agent: agent.to_string(),
            session: session.to_string(),
            time: now_micros(),
            payload,
        })
    }

    /// Sets the optional sequence number and parent id (builder style).
    pub fn with_lineage(mut self, seq: Option<u64>, parent: Option<String>) -> Record {
        self.seq = seq;
        self.parent = parent;
        self
    }

    /// Sets the `Writer:` line (builder style): who writes the record.
    pub fn with_writer(mut self, writer: Option<String>) -> Record {
        self.writer = writer;
        self
    }

    /// Sets the handoff lines (builder style): the next step and the blockers, each a single
    /// line of printable text, as every header value.
    pub fn with_handoff(
        mut self,
        next: Option<String>,
        blockers: Vec<String>,
    ) -> Result<Record, BuildError> {
        if let Some(next) = &next {
            check_field("next", next)?;
        }
        for blocker in &blockers {
            check_field("blocker", blocker)?;
        }
        self.next = next;
        self.blockers = blockers;
        Ok(self)
    }

    /// Sets the `Context-Hash:` line (builder style) from the bytes of the context file.
    pub fn with_context(mut self, context: &[u8]) -> Record {
        self.context_hash = Some(context_hash(context));
        self
    }

    /// The same record, marked as carried forward from session issue `from` (builder style).
    /// A carry also says when the record was first posted: see [`Record::first_posted_at`].
    pub fn carried(mut self, from: u64) -> Record {
        self.carried_from = Some(from);
        self
    }

    /// The same record with its `Posted-At:` (builder style): `first`, the time of the comment
    /// being carried, unless an earlier carry already recorded an older time.
    pub fn first_posted_at(mut self, first: DateTime<Utc>) -> Record {
        self.posted_at = Some(self.first_posted(first));
        self
    }

    /// The same record marked as edited at `at` (builder style), when `edited` (the comment
    /// being carried was edited after posting); an earlier carry's `Edited-At:` is kept.
    pub fn edited_before_carry(mut self, edited: bool, at: DateTime<Utc>) -> Record {
        if edited && self.edited_at.is_none() {
            self.edited_at = Some(at);
        }
        self
    }

    /// When this record was first posted: its `Posted-At:` when it was carried, else `comment`
    /// (the time of the comment that holds it).
    pub fn first_posted(&self, comment: DateTime<Utc>) -> DateTime<Utc> {
        self.posted_at.map_or(comment, |t| t.min(comment))
    }

    /// Whether this is a checkpoint or a health record.
    pub fn kind(&self) -> Kind {
        match self.payload {
            Payload::Checkpoint { .. } => Kind::Checkpoint,
            Payload::Health { .. } => Kind::Health,
            Payload::End { .. } => Kind::End,
            Payload::Takeover { .. } => Kind::Takeover,
        }
    }

    /// The checkpoint phase, or `None` for a health or end record.
    pub fn phase(&self) -> Option<&str> {
        match &self.payload {
            Payload::Checkpoint { phase, .. } => Some(phase),
            Payload::Health { .. } | Payload::End { .. } | Payload::Takeover { .. } => None,
        }
    }

    /// Checkpoint data or health metrics (`null` for an end or takeover record).
    pub fn data(&self) -> &Value {
        static NONE: Value = Value::Null;
        match &self.payload {
            Payload::Checkpoint { data, .. } => data,
            Payload::Health { metrics, .. } => metrics,
            Payload::End { .. } | Payload::Takeover { .. } => &NONE,
        }
    }

    /// Re-checks every header value, for records that did not come from the constructors.
    pub fn check(&self) -> Result<(), BuildError> {
        check_name("agent", &self.agent)?;
        check_name("session", &self.session)?;
        check_field("version", &self.version)?;
        for (name, value) in [
            ("id", &self.id),
            ("parent", &self.parent),
            ("writer", &self.writer),
            ("next", &self.next),
            ("context hash", &self.context_hash),
            ("done", &self.done),
        ] {
            if let Some(v) = value {
                check_field(name, v)?;
            }
        }
        for blocker in &self.blockers {
            check_field("blocker", blocker)?;
        }
        super::session::check_session_fields(self)?;
        match &self.payload {
            Payload::Checkpoint { phase, data } => {
                check_field("phase", phase)?;
                require_object("data", data)
            }
            Payload::Health {
                status,
                metrics,
                next_check,
            } => {
                check_field("status", status)?;
                if let Some(next) = next_check {
                    check_field("next check", next)?;
                }
                require_object("metrics", metrics)
            }
            Payload::End { reason, .. } => super::session::check_reason(reason),
            Payload::Takeover { from, by } => {
                if self.writer.is_none() {
                    return Err(BuildError::NoWriter);
                }
                for (name, value) in [("from", from), ("by", by)] {
                    if let Some(v) = value {
                        check_field(name, v)?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// A fresh record id: a UUIDv7, so ids sort by creation time and are unique across machines.
pub fn new_record_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Whether `text` has the shape of a record id: a UUID in its hyphenated form
/// (`01a232d2-6f5a-743e-b1a3-fe4349829487`), what [`new_record_id`] writes.
pub fn is_record_id(text: &str) -> bool {
    text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
}

/// The `Context-Hash:` value of a context file's bytes: `sha256:` and the first 16 hex digits
/// of their SHA-256 (64 bits: enough to notice a change, short enough to read).
///
/// ```
/// assert_eq!(forgestate::format::context_hash(b""), "sha256:e3b0c44298fc1c14");
/// ```
pub fn context_hash(context: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(context);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

pub(super) fn require_object(what: &'static str, value: &Value) -> Result<(), BuildError> {
    let found = match value {
        Value::Object(_) => return Ok(()),
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
    };
    Err(BuildError::NotAnObject { what, found })
}

/// An empty JSON object, the data of a fresh start.
pub fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// A time as every record and answer writes it ([`format_time`]), for `serialize_with`.
pub(crate) fn ser_time<S: Serializer>(time: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_time(time))
}

fn de_time<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = String::deserialize(d)?;
    parse_time(&text).map_err(serde::de::Error::custom)
}
