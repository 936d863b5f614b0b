//! The verdict on a pair, and ages as a verdict and as a person says them: `alive`/`warning`/
//! `stalled` by thresholds, and `45s`, `12m`, `3h`, `2d`.

use serde::Serialize;

/// The verdict on one (agent, session) pair. Sorted as the table shows them: stalled first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Two writers continued the session from the same record (see `report::session`), and it
    /// has not ended: stop one of them.
    Conflicted,
    /// No record for longer than the stalled threshold.
    Stalled,
    /// No record for longer than the warning threshold.
    Warning,
    /// A record within the warning threshold.
    Alive,
    /// Its newest record is a `[HEALTH]` with `Status: Paused`.
    Paused,
    /// Ended by an `[END]` record with a reason other than `completed` (see `ended`).
    Ended,
    /// Done: an `[END]` with reason `completed`, a final phase, or a `[HEALTH]` with
    /// `Status: Completed`.
    Completed,
}

impl Verdict {
    /// The lowercase name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Conflicted => "conflicted",
            Verdict::Stalled => "stalled",
            Verdict::Warning => "warning",
            Verdict::Alive => "alive",
            Verdict::Paused => "paused",
            Verdict::Ended => "ended",
            Verdict::Completed => "completed",
        }
    }
}

/// The verdict and its reason for a pair whose newest record is `age` seconds old.
pub(super) fn by_age(age: i64, warn: u64, stalled: u64) -> (Verdict, String) {
    let over = |limit: u64| age >= i64::try_from(limit).unwrap_or(i64::MAX);
    let (verdict, limit) = match (over(stalled), over(warn)) {
        (true, _) => (Verdict::Stalled, stalled),
        (false, true) => (Verdict::Warning, warn),
        (false, false) => return (Verdict::Alive, format!("last record {} ago", span(age))),
    };
    let why = format!(
        "no record for {} ({} after {})",
        span(age),
        verdict.name(),
        span(i64::try_from(limit).unwrap_or(i64::MAX))
    );
    (verdict, why)
}

/// A duration as a person says it: `45s`, `12m`, `3h`, `2d`; negative (a clock ahead) is `0s`.
pub fn span(secs: i64) -> String {
    match secs.max(0) {
        s @ 0..120 => format!("{s}s"),
        s @ 120..7_200 => format!("{}m", s / 60),
        s @ 7_200..172_800 => format!("{}h", s / 3_600),
        s => format!("{}d", s / 86_400),
    }
}
