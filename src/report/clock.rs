//! One consistent clock for ages, when the forge's clocks disagree. Pure.
//!
//! A forge reports two times: its `Date` header (what `Thread::now` follows) and the times it
//! stamps on comments and issues (its database's clock). A proxy in front of it, or a server
//! whose `Date` is set otherwise, can make the two disagree. Ages are measured from the forge's
//! own comment times, so the clock they are measured on must agree with those:
//!
//! - comment times running ahead of `Date` (records "from the future", ages negative, a silent
//!   agent reading "alive"): `now` is moved up to the newest of them;
//! - `Date` running ahead of this machine's clock while no comment time does (every agent would
//!   read stalled by the difference): the stamps agree with this machine, not with `Date`, so
//!   `now` is this machine's clock (or the newest stamp, when later). When the forge's clock and
//!   `Date` really are ahead of this machine, a comment posted since shows it (its time runs
//!   ahead of this machine's too), and `Date` is kept.
//!
//! Either way the answer says so, once.

use chrono::{DateTime, Duration, Utc};

/// How far a stored time may run ahead of the `Date` clock before the two count as disagreeing
/// (`Date` has whole seconds, and an answer takes time to arrive).
pub const FUTURE_TOLERANCE_SECS: i64 = 60;

/// The clock ages are measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// Now, consistent with the store's own times.
    pub now: DateTime<Utc>,
    /// How far the store's own times ran ahead of its `Date` clock, when they did by more than
    /// the tolerance: `now` was moved up by this much.
    pub ahead: Option<Duration>,
    /// How far the `Date` clock ran ahead of this machine's and of every time the store
    /// stamped, when it did by more than the tolerance: `now` was moved back by this much (to
    /// this machine's clock, or the newest stamp).
    pub date_ahead: Option<Duration>,
}

/// `now` as the store's clock says (`Thread::now`), checked against this machine's clock
/// (`local`) and the newest time the store stamped on anything (a comment's
/// `created_at`/`updated_at`, an issue's `updated_at`).
pub fn consistent(
    now: DateTime<Utc>,
    local: DateTime<Utc>,
    newest: Option<DateTime<Utc>>,
) -> Clock {
    let tolerance = Duration::seconds(FUTURE_TOLERANCE_SECS);
    if let Some(t) = newest.filter(|t| *t - now > tolerance) {
        return Clock {
            now: t,
            ahead: Some(t - now),
            date_ahead: None,
        };
    }
    // `Date` ahead of this machine: believed only when a stamp bears it out.
    let stamps_ahead_of_local = newest.is_some_and(|t| t - local > tolerance);
    if now - local > tolerance && !stamps_ahead_of_local {
        let moved = newest.map_or(local, |t| t.max(local));
        return Clock {
            now: moved,
            ahead: None,
            date_ahead: Some(now - moved),
        };
    }
    Clock {
        now,
        ahead: None,
        date_ahead: None,
    }
}

impl Clock {
    /// The warning to give when the clocks disagreed.
    pub fn warning(&self) -> Option<String> {
        if let Some(ahead) = self.ahead {
            return Some(format!(
                "the forge's clock (its Date header) runs {} behind the times it stamps on \
                 comments (records from the future: a proxy in front of it with another \
                 clock?); ages are measured from its newest comment time instead. Fix the clock \
                 of the server or proxy that sends Date; this machine's clock is not the one at \
                 fault",
                span(ahead)
            ));
        }
        let ahead = self.date_ahead?;
        Some(format!(
            "the forge's clock (its Date header) runs {} ahead of this machine's clock and of \
             every time it stamps on comments (a proxy in front of it with another clock?); \
             ages are measured on this machine's clock instead, so agents are not all read as \
             stalled. Fix the clock of the server or proxy that sends Date, or, if this \
             machine's clock is the one behind, sync it (NTP)",
            span(ahead)
        ))
    }
}

/// `2h 5m`, `45s`.
pub fn span(d: Duration) -> String {
    let s = d.num_seconds().max(0);
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, _) => format!("{m}m"),
        (h, 0, _) => format!("{h}h"),
        (h, m, _) => format!("{h}h {m}m"),
    }
}
