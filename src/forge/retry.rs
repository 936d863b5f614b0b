//! Retry timing: exponential backoff with jitter (from backon) inside a total time budget, with
//! the server's `Retry-After` honoured but never allowed past the budget.
//!
//! Which failures are worth retrying is decided by the caller; this only decides when, and
//! whether time is left. Before the first wait it says so once (a [`Notice`]), so a user is not
//! left with 30 seconds of silence.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// How hard a request tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total time for all attempts and waits together; zero means a single attempt.
    pub budget: Duration,
    /// Per-attempt timeout replacing the client's default, when set.
    pub attempt_timeout: Option<Duration>,
    /// Connect with this short timeout instead of the client's (a drain during a backoff: an
    /// unreachable forge costs this, one that accepts the connection gets the request timeout).
    pub short_connect: bool,
}

impl RetryPolicy {
    /// Retries within `budget`.
    pub fn full(budget: Duration) -> RetryPolicy {
        RetryPolicy {
            budget,
            ..RetryPolicy::once()
        }
    }

    /// One attempt with a short timeout: for flushes that must not stall an agent.
    pub fn quick(timeout: Duration) -> RetryPolicy {
        RetryPolicy {
            attempt_timeout: Some(timeout),
            ..RetryPolicy::once()
        }
    }

    /// One attempt with the normal timeout.
    pub fn once() -> RetryPolicy {
        RetryPolicy {
            budget: Duration::ZERO,
            attempt_timeout: None,
            short_connect: false,
        }
    }

    /// One attempt with the normal request timeout, connecting with a short timeout.
    pub fn probe() -> RetryPolicy {
        RetryPolicy {
            short_connect: true,
            ..RetryPolicy::once()
        }
    }
}

/// The statuses a retry may fix: request timeout, rate limiting and gateway/server trouble.
pub fn retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504)
}

/// `Retry-After` in seconds or as an HTTP date, as a delay from now. A date is measured from the
/// answer's own `Date` when there is one, so a client clock that has drifted does not stretch or
/// cancel the wait.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let now = super::clock::server_now(headers).map_or_else(SystemTime::now, SystemTime::from);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The one warning line said before the first retry wait, shared by every request of a client
/// (and its clones), so a command says it once however many requests wait.
#[derive(Debug, Clone)]
pub struct Notice {
    said: Arc<AtomicBool>,
    /// What happens when the budget runs out: "saving the record to the outbox".
    then: &'static str,
}

impl Default for Notice {
    fn default() -> Self {
        Notice {
            said: Arc::new(AtomicBool::new(false)),
            then: "giving up",
        }
    }
}

impl Notice {
    /// The same notice (still said at most once), ending with another consequence.
    pub fn with_fallback(&self, then: &'static str) -> Notice {
        Notice {
            said: self.said.clone(),
            then,
        }
    }

    /// Whether the line was said.
    #[cfg(test)]
    pub fn said(&self) -> bool {
        self.said.load(Ordering::Relaxed)
    }

    /// Says the line (once). `patient` is why a command without an answer of its own waits:
    /// it then gives up at the end, whatever `then` says (a cold read has no outbox to answer
    /// from, a flush no outbox to save to).
    fn say(&self, why: &str, left: Duration, patient: Option<&str>) {
        if !self.said.swap(true, Ordering::Relaxed) {
            let then = match patient {
                Some(since) => format!("giving up, since {since}"),
                None => self.then.to_string(),
            };
            tracing::warn!(
                "forge not answering ({why}); retrying for up to {} s, then {then}",
                left.as_secs_f64().ceil() as u64,
            );
        }
    }
}

/// The state of one retried operation.
pub struct Retry {
    deadline: Instant,
    delays: ExponentialBackoff,
    notice: Option<Notice>,
    /// The command's wait budget, which ends every retry however much `deadline` has left.
    wait: Option<super::wait::Wait>,
    /// A single attempt with its own short timeout (`RetryPolicy::quick`, a probe such as the
    /// server version under `-v`): its failure says nothing about the command's wait.
    probe: bool,
    pub attempts: u32,
}

impl Retry {
    pub fn new(policy: RetryPolicy) -> Retry {
        let delays = ExponentialBuilder::new()
            .with_jitter()
            .with_min_delay(Duration::from_millis(200))
            .with_max_delay(Duration::from_secs(8))
            .without_max_times()
            .build();
        Retry {
            deadline: Instant::now() + policy.budget,
            delays,
            notice: None,
            wait: None,
            probe: policy.budget.is_zero() && policy.attempt_timeout.is_some(),
            attempts: 1,
        }
    }

    /// Ends the retries with the command's wait budget too.
    pub(crate) fn within(mut self, wait: super::wait::Wait) -> Retry {
        self.wait = Some(wait);
        self
    }

    /// Says `notice` (once) before the first wait.
    pub fn announce(mut self, notice: Notice) -> Retry {
        self.notice = Some(notice);
        self
    }

    /// Sleeps before the next attempt. Returns false (at once) when the budget is spent.
    pub async fn wait(&mut self, retry_after: Option<Duration>, what: &str, why: &str) -> bool {
        if self.probe {
            return false;
        }
        let mut remaining = self.deadline.saturating_duration_since(Instant::now());
        if let Some(wait) = &self.wait {
            let left = wait.remaining();
            if left.is_zero() || !wait.may_retry() {
                // The command's budget is spent (or a recent outage allowed one attempt).
                wait.give_up();
                return false;
            }
            remaining = remaining.min(left);
        }
        if remaining.is_zero() {
            return false;
        }
        let backoff = self.delays.next().unwrap_or(Duration::from_secs(8));
        let delay = retry_after.unwrap_or(backoff).min(remaining);
        if let Some(notice) = &self.notice {
            let patient = self.wait.as_ref().and_then(|w| w.patient_why());
            if why.starts_with(what) {
                notice.say(why, remaining, patient);
            } else {
                notice.say(&format!("{what}: {why}"), remaining, patient);
            }
        }
        self.attempts += 1;
        tracing::debug!(
            "{what}: {why}; attempt {} in {:.1}s",
            self.attempts,
            delay.as_secs_f64()
        );
        tokio::time::sleep(delay).await;
        if let Some(wait) = &self.wait {
            wait.touch();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        let soon = std::time::SystemTime::now() + Duration::from_secs(120);
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_str(&httpdate::fmt_http_date(soon)).unwrap(),
        );
        let d = retry_after(&h).unwrap();
        assert!(
            d > Duration::from_secs(110) && d <= Duration::from_secs(120),
            "{d:?}"
        );
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(
            retry_after(&h),
            Some(Duration::ZERO),
            "a past date means now"
        );
        h.insert(
            reqwest::header::DATE,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:27:30 GMT"),
        );
        assert_eq!(
            retry_after(&h),
            Some(Duration::from_secs(30)),
            "a date is measured on the server's clock"
        );
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(retryable_status(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [400, 401, 403, 404, 409, 422, 501] {
            assert!(!retryable_status(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }

    #[tokio::test]
    async fn the_budget_caps_waits_and_ends_retries() {
        let mut r = Retry::new(RetryPolicy::full(Duration::from_millis(300)));
        let start = Instant::now();
        assert!(
            r.wait(Some(Duration::from_secs(60)), "GET /x", "503").await,
            "Retry-After is capped"
        );
        assert!(start.elapsed() < Duration::from_secs(1));
        assert!(!r.wait(None, "GET /x", "503").await, "budget spent");
        let mut once = Retry::new(RetryPolicy::once());
        assert!(!once.wait(None, "GET /x", "503").await);
    }

    #[tokio::test]
    async fn the_command_budget_ends_retries_and_is_given_up() {
        let wait = crate::forge::wait::Wait::new(Duration::from_millis(300), Duration::ZERO);
        let mut r = Retry::new(RetryPolicy::full(Duration::from_secs(30))).within(wait.clone());
        let start = Instant::now();
        while r.wait(None, "GET /x", "503").await {}
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "the command's budget, not 30 s"
        );
        assert!(wait.spent(), "the command gave up on the forge");
    }

    #[tokio::test]
    async fn the_wait_is_announced_before_sleeping_and_only_then() {
        let notice = Notice::default();
        let mut once = Retry::new(RetryPolicy::once()).announce(notice.clone());
        assert!(!once.wait(None, "GET /x", "503").await);
        assert!(!notice.said(), "no wait, nothing to announce");
        let budget = RetryPolicy::full(Duration::from_millis(50));
        let mut r = Retry::new(budget).announce(notice.with_fallback("saving it"));
        assert!(r.wait(None, "GET /x", "503").await);
        assert!(
            notice.said(),
            "clones share the notice: said once per client"
        );
    }
}
