//! Record timestamps: the one canonical way we write them and the lenient ways we read them.
//!
//! Writing: UTC RFC 3339 with exactly six fractional digits and `Z`
//! (`2026-11-29T08:40:58.123456Z`), which is also what the seed's
//! `datetime.utcnow().isoformat() + "Z"` prints whenever microseconds are non-zero.
//!
//! Reading accepts any RFC 3339 time (any offset, any number of fractional digits, or none) and
//! one common Python slip: an offset followed by a stray `Z` (`...+00:00Z`), which is what
//! `datetime.now(timezone.utc).isoformat() + "Z"` produces.

use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};

/// Formats a time the way every record we write carries it.
pub fn format_time(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Parses a record's `Time:` value. The error says what shape was expected.
pub fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    DateTime::parse_from_rfc3339(text)
        // `...+00:00Z`: an explicit offset with a redundant `Z` glued on.
        .or_else(|e| {
            text.strip_suffix('Z')
                .map_or(Err(e), DateTime::parse_from_rfc3339)
        })
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| "expected an RFC 3339 time such as 2026-11-29T08:40:58.123456Z".to_string())
}

/// The current time, cut to the microsecond precision records carry, so that a record built now
/// renders and parses back to an equal value.
pub fn now_micros() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}
