//! The server's clock, read from its `Date` header.
//!
//! A `since` bound is compared with the server's timestamps and a `Retry-After` date is set by
//! the server's clock, while the client only knows its own. On a machine whose clock has
//! drifted, trusting ours would make the duplicate check before a re-post look in the wrong
//! window, and a comment committed before a lost answer would be posted a second time.

use chrono::{DateTime, Duration, Utc};
use reqwest::header::{DATE, HeaderMap};

/// The time the server said it answered, when it said so (every Go and nginx server does).
pub fn server_now(headers: &HeaderMap) -> Option<DateTime<Utc>> {
    let value = headers.get(DATE)?.to_str().ok()?;
    Some(httpdate::parse_http_date(value.trim()).ok()?.into())
}

/// How far the server's clock is behind ours; negative when it runs ahead. `Date` has whole
/// seconds and the answer took time to arrive, so a second or two of lag is noise.
pub fn server_lag(headers: &HeaderMap) -> Option<Duration> {
    Some(Utc::now() - server_now(headers)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn date(t: DateTime<Utc>) -> HeaderMap {
        let mut h = HeaderMap::new();
        let text = httpdate::fmt_http_date(t.into());
        h.insert(DATE, HeaderValue::from_str(&text).unwrap());
        h
    }

    #[test]
    fn reads_the_servers_clock_and_its_lag() {
        let behind = Utc::now() - Duration::minutes(20);
        let lag = server_lag(&date(behind)).unwrap();
        assert!(
            lag >= Duration::minutes(20) && lag < Duration::minutes(20) + Duration::seconds(2),
            "{lag}"
        );
        let ahead = server_lag(&date(Utc::now() + Duration::minutes(5))).unwrap();
        assert!(ahead < -Duration::minutes(4), "{ahead}");
        assert_eq!(server_now(&HeaderMap::new()), None);
        let mut junk = HeaderMap::new();
        junk.insert(DATE, HeaderValue::from_static("yesterday"));
        assert_eq!(server_now(&junk), None);
    }
}
