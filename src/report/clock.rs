//! One consistent clock for ages, when the forge's two clocks disagree. Pure.
//!
//! A forge reports two times: its `Date` header (what `Thread::now` follows) and the times it
//! stamps on comments and issues (its database's clock). A proxy in front of it, or a server
//! whose `Date` is set otherwise, can make the two disagree: records then come "from the
//! future", ages go negative, and an agent silent for hours reads "alive". The forge's own
//! comment times are what ages are measured from, so when they run ahead of `Date`, `now` is
//! moved up to the newest of them: ages are never negative, and a silent agent ages.

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
}

/// `now` as the store's clock says (`Thread::now`), checked against the newest time the store
/// stamped on anything (a comment's `created_at`/`updated_at`, an issue's `updated_at`).
pub fn consistent(now: DateTime<Utc>, newest: Option<DateTime<Utc>>) -> Clock {
    match newest {
        Some(t) if t - now > Duration::seconds(FUTURE_TOLERANCE_SECS) => Clock {
            now: t,
            ahead: Some(t - now),
        },
        _ => Clock { now, ahead: None },
    }
}

impl Clock {
    /// The warning to give when the clocks disagreed.
    pub fn warning(&self) -> Option<String> {
        let ahead = self.ahead?;
        Some(format!(
            "the forge's clock (its Date header) runs {} behind the times it stamps on comments \
             (records from the future: a proxy in front of it with another clock?); ages are \
             measured from its newest comment time instead. Fix the clock of the server or \
             proxy that sends Date; this machine's clock is not the one at fault",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_from_the_future_moves_now_up_and_a_small_skew_does_not() {
        let now = Utc::now();
        let c = consistent(now, Some(now + Duration::hours(2)));
        assert_eq!(c.now, now + Duration::hours(2));
        assert_eq!(c.ahead, Some(Duration::hours(2)));
        assert!(c.warning().unwrap().contains("2h behind"));
        for newest in [
            None,
            Some(now - Duration::hours(1)),
            Some(now + Duration::seconds(30)),
        ] {
            assert_eq!(consistent(now, newest), Clock { now, ahead: None });
        }
    }
}
