//! The parts of a record that tell a session's story beyond its state: the end record's reasons,
//! write-ahead intents (`Intent:`), their confirmation (`Done:`), and the builders that set them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::record::{BuildError, Payload, Record};
use super::validate::check_field;

/// Why a session ended, the reasons seed 000's `session.json` knows (`stop_reason`).
pub const END_REASONS: [&str; 4] = ["completed", "interrupted", "error", "user_stop"];

/// A side effect about to happen, recorded before it happens: `Intent: NAME` and, when there is
/// any, its JSON in a separate `json-intent` block that seed readers do not look at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Intent {
    /// What is about to happen, e.g. `create_pr`.
    pub name: String,
    /// What the agent needs to check the world afterwards (a branch, a title); `null` when none.
    #[serde(default)]
    pub data: Value,
}

impl Record {
    /// A new version-2.0 end record stamped now: the session stopped for `reason` (one of
    /// [`END_REASONS`]), with an optional note in words.
    pub fn end(
        agent: &str,
        session: &str,
        reason: &str,
        note: Option<&str>,
    ) -> Result<Record, BuildError> {
        check_reason(reason)?;
        Record::stamped(
            agent,
            session,
            Payload::End {
                reason: reason.to_string(),
                note: note.map(str::to_string),
            },
        )
    }

    /// Records a write-ahead intent on a checkpoint (builder style).
    pub fn with_intent(mut self, name: &str, data: Value) -> Result<Record, BuildError> {
        check_field("intent", name)?;
        self.intent = Some(Intent {
            name: name.to_string(),
            data,
        });
        Ok(self)
    }

    /// Confirms the intent `name` explicitly (builder style).
    pub fn with_done(mut self, name: &str) -> Result<Record, BuildError> {
        check_field("done", name)?;
        self.done = Some(name.to_string());
        Ok(self)
    }

    /// Sets the `Parent:` line (builder style): the newest record of the session the writer knew.
    pub fn with_parent(mut self, parent: Option<String>) -> Record {
        self.parent = parent;
        self
    }

    /// The end reason, for an end record.
    pub fn end_reason(&self) -> Option<&str> {
        match &self.payload {
            Payload::End { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// The intent this record leaves pending, if it is a checkpoint with an intent it does not
    /// confirm itself.
    pub fn open_intent(&self) -> Option<&Intent> {
        let intent = self.intent.as_ref()?;
        match (&self.payload, &self.done) {
            (Payload::Checkpoint { .. }, Some(done)) if *done == intent.name => None,
            (Payload::Checkpoint { .. }, _) => Some(intent),
            _ => None,
        }
    }
}

/// Refuses a reason outside [`END_REASONS`].
pub(super) fn check_reason(reason: &str) -> Result<(), BuildError> {
    match END_REASONS.contains(&reason) {
        true => Ok(()),
        false => Err(BuildError::BadReason(reason.chars().take(40).collect())),
    }
}

/// Intents and confirmations belong to checkpoints; their names are header values.
pub(super) fn check_session_fields(record: &Record) -> Result<(), BuildError> {
    if let Some(intent) = &record.intent {
        check_field("intent", &intent.name)?;
    }
    if let Some(done) = &record.done {
        check_field("done", done)?;
    }
    let checkpoint = matches!(record.payload, Payload::Checkpoint { .. });
    if !checkpoint && (record.intent.is_some() || record.done.is_some()) {
        return Err(BuildError::NotCheckpoint);
    }
    Ok(())
}
