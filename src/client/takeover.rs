//! Taking a session over (`resume --take-over`): a `[TAKEOVER]` record hands the agent's session
//! to a writer (this client's, or the next worker's for a supervisor), and the fencing rule
//! (`crate::scan::fence`) does the rest on every reader. Also the one message a fenced writer
//! gets.

use super::{Client, Outcome, Resumed};
use crate::error::{Error, Result};
use crate::format::Record;
use crate::scan::Takeover;
use crate::store::Thread;

/// The answer of [`Client::take_over`]: where the new owner picks up, and the takeover posted.
#[derive(Debug)]
pub struct TakenOver {
    /// Where the new owner resumes: the session's newest unfenced checkpoint.
    pub resumed: Resumed,
    /// The takeover record as saved (posted, or spooled to the outbox).
    pub outcome: Outcome,
}

/// Fails with the error a fenced writer gets (who took the session over, when, from which
/// record) when, among `entries`, another writer took `agent`'s `session` from `writer`.
pub(crate) fn refuse_fenced(
    entries: &[crate::scan::Entry],
    agent: &str,
    session: &str,
    writer: &str,
) -> Result<()> {
    let Some(owner) = crate::scan::fenced_out(entries, agent, session, writer) else {
        return Ok(());
    };
    Err(Error::Fenced {
        message: format!(
            "fenced: agent {agent} in session {session} belongs to another writer now: {}; \
             this writer's records of it are ignored by every reader, so stop working on it \
             (or take it over again with resume --take-over)",
            owner.describe()
        ),
    })
}

impl<T: Thread> Client<T> {
    /// Takes the session of `agent` over for `writer` (default: this client's writer): posts
    /// a `[TAKEOVER]` record naming the session's newest unfenced record as `From:`, after
    /// which every reader fences the other writers' records of the session. Answers where the
    /// new owner resumes. `writer` lets a supervisor take a session over on behalf of the
    /// next worker, which then writes as `writer` from its first command.
    pub async fn take_over(
        &self,
        agent: &str,
        session: &str,
        writer: Option<&str>,
    ) -> Result<TakenOver> {
        let (agent, session) = (crate::format::nfc(agent), crate::format::nfc(session));
        let mut resumed = self.resume_checked(&agent, &session, None).await?;
        if resumed.resume.offline {
            return Err(Error::Unavailable {
                message: format!(
                    "cannot take agent {agent} in session {session} over: the store could not \
                     be read, so the record to continue from is unknown; nothing was posted, \
                     try again when it answers"
                ),
            });
        }
        let owner = writer.unwrap_or(self.writer());
        let from = resumed.session.latest_id.clone();
        let by = Some(self.writer().to_string());
        let record = Record::takeover(&agent, &session, owner, from.clone(), by)?.with_parent(from);
        let outcome = match self.save_as_written(record).await {
            Outcome::Failed(e) => return Err(e),
            outcome => outcome,
        };
        let posted = match &outcome {
            Outcome::Posted(p) => Some(&p.record),
            Outcome::Spooled { record, .. } => Some(record),
            Outcome::Failed(_) => None,
        };
        if let Some(record) = posted {
            resumed.session.latest_id.clone_from(&record.id);
            resumed.session.owner = Takeover::posted(record, record.time);
        }
        Ok(TakenOver { resumed, outcome })
    }
}
