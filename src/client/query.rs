//! What the reading verbs take beyond a filter, as structs rather than positional and boolean
//! arguments (octocrab's builders, without the ceremony): [`ListQuery`] for
//! [`Client::query`](super::Client::query), [`HistoryQuery`] for
//! [`Client::history`](super::Client::history), [`ForkQuery`] for
//! [`Client::fork_record`](super::Client::fork_record) and [`Client::fork`](super::Client::fork).
//! Each has public fields and a constructor with the one thing it cannot do without.

use crate::scan::Filter;

/// A listing: which records, how many, and how far back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListQuery {
    /// Which records (by default, every one).
    pub filter: Filter,
    /// Keep only the newest this many, counted after the filter.
    pub limit: Option<usize>,
    /// Only records this young or younger, the age counted back on the store's clock (as
    /// `status` measures ages), not this machine's; it replaces `filter.since`.
    pub age: Option<chrono::Duration>,
    /// Read the thread's whole history: every earlier thread the current one continues (a
    /// forge's rotated-away session issues), so the records a rotation did not carry are listed
    /// too.
    pub whole_history: bool,
}

impl ListQuery {
    /// Every record matching `filter`.
    pub fn new(filter: Filter) -> ListQuery {
        ListQuery {
            filter,
            ..ListQuery::default()
        }
    }

    /// The same, reading the thread's whole history.
    pub fn whole_history(mut self) -> ListQuery {
        self.whole_history = true;
        self
    }
}

/// One session's records, in thread order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryQuery {
    /// The session.
    pub session: String,
    /// Only agents matching this glob (by default, every agent of the session).
    pub agent: Option<String>,
    /// Add the JSON changes between consecutive checkpoints.
    pub diff: bool,
}

impl HistoryQuery {
    /// Every record of `session`, without diffs.
    pub fn new(session: impl Into<String>) -> HistoryQuery {
        HistoryQuery {
            session: session.into(),
            ..HistoryQuery::default()
        }
    }
}

/// A new session started from an existing one's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForkQuery {
    /// The session forked from.
    pub session: String,
    /// The record forked from (its id); by default the session's newest checkpoint.
    pub at: Option<String>,
    /// The new session.
    pub new_session: String,
    /// The agent whose records are meant, when the session has several.
    pub agent: Option<String>,
    /// Fork into a session that already has records too; the new record's `next` names the
    /// record it replaced (see [`crate::report::fork_over`]).
    pub force: bool,
}

impl ForkQuery {
    /// `session`'s newest checkpoint, into `new_session`, which must have no records.
    pub fn new(session: impl Into<String>, new_session: impl Into<String>) -> ForkQuery {
        ForkQuery {
            session: session.into(),
            new_session: new_session.into(),
            ..ForkQuery::default()
        }
    }
}
