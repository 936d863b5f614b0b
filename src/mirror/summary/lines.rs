//! The lineage lines of the mirror's summary: per (agent, session), its newest record `Id` and
//! whether two of its records name one `Parent:`, so a warm `resume` answers a session's
//! conflicts as the whole pair would, or leaves it to the whole read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Role, Summary, role};
use crate::format::parse;
use crate::mirror::slot::{Body, Slot};
use crate::scan::Trust;

/// One (agent, session) pair's lineage: enough for a warm `resume` to know that no two of its
/// records name the same `Parent:` (which only the whole pair can show).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(in crate::mirror) struct Line {
    pub agent: String,
    pub session: String,
    /// The newest record `Id` of the pair (what its next record's `Parent:` should name).
    pub latest: Option<String>,
    /// Some parent is named twice, or the newest record is named by an older one: only the
    /// whole read answers this pair.
    pub forked: bool,
}

impl Summary {
    /// Extends the pair's line by a new accepted record `slot`; `false` when the record may
    /// fork it (its `Parent:` is not the pair's newest record), which only the whole read can
    /// tell.
    pub fn extend_line(&mut self, slot: &Slot) -> bool {
        let Some((agent, session, parent, id)) = lineage(slot) else {
            return true;
        };
        let at = self
            .lines
            .iter()
            .position(|l| l.agent == agent && l.session == session);
        let line = match at {
            Some(n) => &mut self.lines[n],
            None => {
                self.lines.push(Line {
                    agent,
                    session,
                    ..Line::default()
                });
                let last = self.lines.len() - 1;
                &mut self.lines[last]
            }
        };
        if parent.is_some() && parent != line.latest {
            return false;
        }
        if id.is_some() {
            line.latest = id;
        }
        true
    }

    /// Whether the table answers a `resume` of (agent, session) as the whole pair would: its
    /// lineage is one line, and the newest record with an `Id` among the pair's table entries is
    /// the pair's newest `Id`.
    pub fn answers_pair(&self, agent: &str, session: &str, trust: &Trust) -> bool {
        let line = self
            .lines
            .iter()
            .find(|l| l.agent == agent && l.session == session);
        let newest_in_table = self
            .table
            .iter()
            .filter_map(|s| match role(s, trust, self.first_signed) {
                Role::Record((a, se, _), id) if &*a == agent && &*se == session => {
                    Some((s.place(), id))
                }
                _ => None,
            })
            .filter_map(|(place, id)| id.map(|id| (place, id)))
            .max_by_key(|(place, _)| *place)
            .map(|(_, id)| id);
        match line {
            Some(line) => !line.forked && line.latest == newest_in_table,
            None => newest_in_table.is_none(),
        }
    }
}

/// A record slot's pair, `Parent:` and `Id`; `None` for a slot that is not a record.
fn lineage(slot: &Slot) -> Option<(String, String, Option<String>, Option<String>)> {
    match &slot.b {
        Body::R(head, _) => Some((
            head.agent().to_string(),
            head.session().to_string(),
            head.p.clone(),
            head.id.clone(),
        )),
        Body::I(body) => parse(body)
            .ok()
            .map(|r| (r.agent, r.session, r.parent, r.id)),
        _ => None,
    }
}

/// A slot's `Parent:`, when it is a record.
pub(super) fn parent_of(slot: &Slot) -> Option<String> {
    lineage(slot).and_then(|(_, _, parent, _)| parent)
}

/// One pair's newest `Id`, the parents its records name (by [`short`]), and whether one was
/// named twice.
type PairLine = (Option<String>, std::collections::HashSet<u64>, bool);

/// A record `Id` as a 64-bit hash: a long thread's parents are counted without a copy of each.
/// Two `Id`s of one hash only make a line look forked, which the whole read then answers.
fn short(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The lines of every pair, built from the accepted records in thread order (the whole read).
#[derive(Default)]
pub(super) struct Lines {
    /// Per pair (by agent, then session): its line so far.
    pairs: BTreeMap<String, BTreeMap<String, PairLine>>,
}

impl Lines {
    pub(super) fn add(
        &mut self,
        agent: &str,
        session: &str,
        parent: Option<String>,
        id: Option<&str>,
    ) {
        // Looked up by reference: a pair's names are copied once, not once a record.
        if !self.pairs.contains_key(agent) {
            self.pairs.insert(agent.to_string(), BTreeMap::new());
        }
        let Some(sessions) = self.pairs.get_mut(agent) else {
            return;
        };
        if !sessions.contains_key(session) {
            sessions.insert(session.to_string(), PairLine::default());
        }
        let Some((latest, parents, twice)) = sessions.get_mut(session) else {
            return;
        };
        if let Some(parent) = parent {
            *twice |= !parents.insert(short(&parent));
        }
        if let Some(id) = id {
            *latest = Some(id.to_string());
        }
    }

    pub(super) fn finish(self) -> Vec<Line> {
        (self.pairs.into_iter())
            .flat_map(|(agent, sessions)| {
                let agent = std::iter::repeat(agent);
                agent.zip(sessions)
            })
            .map(|(agent, (session, (latest, parents, twice)))| {
                let forked = twice || latest.as_ref().is_some_and(|l| parents.contains(&short(l)));
                Line {
                    agent,
                    session,
                    latest,
                    forked,
                }
            })
            .collect()
    }
}
