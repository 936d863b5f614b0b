//! `fork`: start a new session from the state of a checkpoint of another one.
//!
//! Pure. The new checkpoint carries the source's phase, data, handoff, context hash and the
//! write-ahead intent it left pending (so the worker resuming the fork checks the world before
//! it repeats a side effect), and names the source in `Parent:`, which is how `history` shows
//! where a forked session came from.

use crate::error::{Error, Result};
use crate::format::{Kind, Record};
use crate::scan::Entry;

/// How a forced fork's `Next:` opens: it names the record of `session` it replaced.
fn forked_over(session: &str) -> String {
    format!("forked over session {session}'s newest record")
}

/// Whether `record` is a forced fork (`fork --force`): a deliberate reset of its session's
/// state, whose `Next:` says which record it replaced. It continues no writer of its session.
pub fn is_forced_fork(record: &Record) -> bool {
    record
        .next
        .as_deref()
        .is_some_and(|next| next.starts_with(&forked_over(&record.session)))
}

/// The checkpoint that starts `new_session`, from a checkpoint of `session` among `entries`:
/// the record whose id is `at` (refused when it is fenced), else the newest checkpoint (of
/// `agent`, when given) a reader believes, the one `resume` answers from. The new
/// record is written by the source's agent. With `force`, also into a session that already has
/// records (refused otherwise): the new record's `next` then says which record it replaced, so
/// the agent resuming that session and a person reading it see that its state was reset.
pub fn fork_over(
    entries: &[Entry],
    session: &str,
    at: Option<&str>,
    new_session: &str,
    agent: Option<&str>,
    force: bool,
) -> Result<Record> {
    if new_session == session {
        return Err(Error::data(
            "new_session",
            format!(
                "the new session is {session}, the session being forked: a fork starts another \
                 session; name one no record uses (to go back, checkpoint the old state again)"
            ),
        ));
    }
    let taken: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.record.session == new_session)
        .collect();
    if !taken.is_empty() && !force {
        return Err(Error::data(
            "new_session",
            format!(
                "session {new_session} already has {} record(s), and a fork would become its \
                 newest, sending its agent back to {session}'s state; name a new session \
                 (`forgestate list --session {new_session}` shows what is there), or fork with \
                 force (`--force`) to replace its state",
                taken.len()
            ),
        ));
    }
    let replaced = taken.last().map(|e| {
        format!(
            "{} {} ({}, by {})",
            forked_over(new_session),
            e.record.id.as_deref().unwrap_or("without an Id"),
            e.record
                .phase()
                .map_or_else(|| "a health signal".to_string(), |p| format!("phase {p}")),
            e.record.agent
        )
    });
    let by_agent = agent.map(|a| format!(" by agent {a}")).unwrap_or_default();
    let mine =
        |e: &&Entry| e.record.session == session && agent.is_none_or(|a| e.record.agent == a);
    let source = match at {
        Some(id) => {
            let source = entries
                .iter()
                .filter(mine)
                .find(|e| e.record.id.as_deref() == Some(id))
                .ok_or_else(|| {
                    Error::data(
                        "at",
                        format!(
                            "no record {id} in session {session}{by_agent}; `forgestate history \
                             --session {session}` lists its record ids"
                        ),
                    )
                })?;
            if source.fenced {
                return Err(Error::data(
                    "at",
                    format!(
                        "record {id} is fenced: writer {} wrote it after agent {}'s session \
                         {session} was taken over, so no reader resumes from it and a fork \
                         would bring its state back; fork without --at to start from the \
                         checkpoint resume answers from, or name a record that is not fenced \
                         (`forgestate list --session {session} --json` marks the fenced ones)",
                        source.record.writer.as_deref().unwrap_or("unknown"),
                        source.record.agent,
                    ),
                ));
            }
            source
        }
        None => {
            // The checkpoint `resume` answers from: the fencing rule applied (`scan::fence`).
            let checkpoints: Vec<&Entry> = entries
                .iter()
                .filter(mine)
                .filter(|e| !e.fenced && e.record.kind() == Kind::Checkpoint)
                .collect();
            let mut agents: Vec<&str> = checkpoints
                .iter()
                .map(|e| e.record.agent.as_str())
                .collect();
            agents.sort_unstable();
            agents.dedup();
            if agents.len() > 1 {
                return Err(Error::data(
                    "session",
                    format!(
                        "session {session} has checkpoints by {} agents ({}); say whose state \
                         to fork by naming the agent",
                        agents.len(),
                        agents.join(", ")
                    ),
                ));
            }
            checkpoints.last().copied().ok_or_else(|| {
                Error::data(
                    "session",
                    format!("session {session} has no checkpoint{by_agent} to fork"),
                )
            })?
        }
    };
    let r = &source.record;
    let Some(phase) = r.phase() else {
        return Err(Error::data(
            "at",
            "that record is a [HEALTH] signal, which holds no state; fork from a checkpoint",
        ));
    };
    let Some(id) = r.id.clone() else {
        return Err(Error::data(
            "session",
            "the checkpoint to fork is a version 1.0 record without an Id:, so the fork could not \
             name it in Parent:; post a new checkpoint of that session first",
        ));
    };
    let (next, mut blockers) = (r.next.clone(), r.blockers.clone());
    let next = match (replaced, next) {
        (None, next) => next,
        (Some(note), None) => Some(note),
        (Some(note), Some(next)) => {
            let both = format!("{note}; then: {next}");
            match both.chars().count() <= crate::format::MAX_FIELD_CHARS {
                true => Some(both),
                // Too long for one header line: the source's handoff becomes a blocker line.
                false => {
                    blockers.insert(0, format!("handoff of the forked record: {next}"));
                    Some(note)
                }
            }
        }
    };
    let mut record = Record::checkpoint(&r.agent, new_session, phase, r.data().clone())?
        .with_lineage(None, Some(id))
        .with_handoff(next, blockers)?;
    record.context_hash = r.context_hash.clone();
    // A side effect the source was about to perform and had not confirmed stays pending in the
    // fork: `resume` of the new session answers it as `pending_intent`.
    record.intent = r.open_intent().cloned();
    Ok(record)
}
