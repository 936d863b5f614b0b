//! The HTTP client for the Forgejo/Gitea API: one builder, one request path, typed answers.
//!
//! Built once (octocrab-style) with the base URL, the token, timeouts and a retry policy. The
//! token lives in a `SecretString` and only travels in an `Authorization` header marked
//! sensitive, never in a URL, so it cannot leak through reqwest's error messages; it is refused
//! over plain `http://` to anything but loopback unless explicitly allowed. Redirects are never
//! followed: a renamed repository answers 301, and a followed POST would silently become a GET.
//!
//! Every request goes through [`ForgeClient::raw`], which retries transient failures (connect
//! errors, timeouts, resets, 408/429/5xx) within the policy's budget, saying once that it waits.
//! TLS failures (untrusted certificates, protocol errors, `https://` to a plain-HTTP server) are
//! not transient: they fail at once. Creating a comment is the exception: it is not idempotent,
//! so `ForgeThread` drives its retries itself (`post.rs`).
//!
//! The client is made by [`ForgeClientBuilder`] (`builder.rs`), which checks the base URL.

mod builder;
mod fail;
mod scrub;
mod stream;

use fail::{status_error, transport};
use scrub::scrub;

pub(crate) use builder::ForgeClientBuilder;
pub(crate) use stream::Opened;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use secrecy::SecretString;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{Call, ForgeError};
use super::models::ApiError;
use super::retry::{Notice, Retry, RetryPolicy, retry_after, retryable_status};
use super::wait::Wait;

/// A Forgejo/Gitea API client. Cloning is cheap and shares the connection pool.
#[derive(Clone)]
pub struct ForgeClient {
    http: reqwest::Client,
    /// The same client with a short connect timeout, for `RetryPolicy::short_connect`, built
    /// on first use and shared by clones.
    short_connect: std::sync::Arc<builder::LazyClient>,
    /// The same client connecting within the wait's quick timeout, for the one attempt after
    /// an outage marker (`Wait::quick_connect`), built on first use and shared by clones.
    quick_connect: std::sync::Arc<builder::LazyClient>,
    base: Url,
    api: Url,
    /// Kept only to scrub it from the server's error messages (Forgejo echoes unknown tokens).
    token: Option<SecretString>,
    policy: RetryPolicy,
    /// The request timeout the client was built with (a patient request may wait longer).
    request_timeout: std::time::Duration,
    max_response_bytes: usize,
    /// Said once before the first retry wait of any request of this client or its clones.
    notice: Notice,
    /// How far the server's clock was behind ours at its last answer (its `Date`), in
    /// milliseconds; `i64::MIN` until an answer carried one. Shared by clones.
    lag_ms: std::sync::Arc<std::sync::atomic::AtomicI64>,
    /// The command's wait budget, shared by clones (`wait.rs`).
    wait: Wait,
}

impl std::fmt::Debug for ForgeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForgeClient")
            .field("base", &self.base.as_str())
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// One answer, whatever its status.
pub struct Raw {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub call: Call,
}

impl ForgeClient {
    /// The token's fingerprint under `salt` ([`crate::format::salted_fingerprint`]); `None`
    /// without a token.
    pub(crate) fn token_fingerprint(&self, salt: &str) -> Option<String> {
        let token = self.token.as_ref()?;
        Some(crate::format::salted_fingerprint(salt, token))
    }

    /// The instance's web root, e.g. `https://forge.example.com/`.
    pub fn base(&self) -> &Url {
        &self.base
    }

    pub fn policy(&self) -> RetryPolicy {
        self.policy
    }

    /// The same client with another retry policy.
    pub fn with_policy(&self, policy: RetryPolicy) -> ForgeClient {
        ForgeClient {
            policy,
            ..self.clone()
        }
    }

    /// The same client, whose "retrying" line ends by saying what happens after the budget:
    /// `then` is e.g. "saving the record to the outbox". The line is still said once in all.
    pub fn with_fallback(&self, then: &'static str) -> ForgeClient {
        ForgeClient {
            notice: self.notice.with_fallback(then),
            ..self.clone()
        }
    }

    /// How far the server's clock was behind ours at its last answer that said (negative when
    /// it runs ahead); `None` before any answer carried a `Date`.
    pub fn server_lag(&self) -> Option<chrono::Duration> {
        match self.lag_ms.load(std::sync::atomic::Ordering::Relaxed) {
            i64::MIN => None,
            ms => Some(chrono::Duration::milliseconds(ms)),
        }
    }

    /// The server's clock now, as its last `Date` showed it; ours before any answer.
    pub fn server_now(&self) -> chrono::DateTime<chrono::Utc> {
        let now = chrono::Utc::now();
        self.server_lag().map_or(now, |lag| now - lag)
    }

    /// A retry state for one operation under this client's policy, announcing its first wait.
    pub fn retry(&self) -> Retry {
        self.retry_quietly().announce(self.notice.clone())
    }

    /// A retry state under this client's policy and wait budget that announces nothing.
    pub fn retry_quietly(&self) -> Retry {
        Retry::new(self.policy).within(self.wait.clone())
    }

    /// The command's wait budget (shared by every clone of this client).
    pub(crate) fn wait(&self) -> &Wait {
        &self.wait
    }

    /// Sends a request (with retries) and decodes a JSON answer. Only the statuses in `ok` count
    /// as success.
    pub async fn send<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
        ok: &[StatusCode],
    ) -> Result<T, ForgeError> {
        let raw = self.raw(method, path, query, body).await?;
        if !ok.contains(&raw.status) {
            return Err(self.status_error(raw));
        }
        serde_json::from_slice(&raw.body).map_err(|e| self.decode_error(&raw, &e))
    }

    /// Sends a request, retrying transient failures within the policy's budget. Returns the
    /// last answer whatever its status; only transport failures are errors.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Raw, ForgeError> {
        let mut retry = self.retry();
        loop {
            let result = self.once(method.clone(), path, query, body.as_ref()).await;
            let Some((after, why)) = worth_retrying(&result) else {
                return result;
            };
            let what = format!("{method} /{path}");
            if !retry.wait(after, &what, &why).await {
                return result;
            }
        }
    }

    /// Exactly one attempt.
    pub async fn once(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Raw, ForgeError> {
        let (response, call) = self.start(method, path, query, body).await?;
        self.finish(response, call).await
    }

    /// Sends one request and waits for the answer's headers; its body is not read yet.
    async fn start(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<(reqwest::Response, Call), ForgeError> {
        let call = Call {
            method: method_name(&method),
            path: format!("/{path}"),
        };
        let url = self
            .url(path)
            .map_err(|e| ForgeError::Setup(format!("{call}: {e}")))?;
        // After an outage marker connecting must be quick; a forge that accepts the connection
        // gets the command's usual deadline (a forge back but slow to answer is posted to).
        let lazy = match (
            self.wait.quick_connect().is_some(),
            self.policy.short_connect,
        ) {
            (true, _) => Some(&self.quick_connect),
            (false, true) => Some(&self.short_connect),
            (false, false) => None,
        };
        let http = match lazy.map(|l| &***l) {
            Some(Ok(client)) => client,
            Some(Err(e)) => return Err(ForgeError::Setup(e.to_string())),
            None => &self.http,
        };
        let mut request = http.request(method, url).query(query);
        if let Some(body) = body {
            request = request.json(body);
        }
        match self.policy.attempt_timeout {
            Some(t) => request = request.timeout(t),
            // A command without an answer of its own waits up to the patience, not the
            // request timeout (the body's pace is watched as it is read).
            None if self.wait.is_patient() => {
                request = request.timeout(self.request_timeout.max(self.wait.patience()));
            }
            None => {}
        }
        // Connecting and waiting for the headers end with the command's wait rule.
        let left = self.wait.remaining();
        if left.is_zero() {
            return Err(self.not_tried(call));
        }
        tracing::debug!("{call}");
        let what = call.to_string();
        let response = match self.wait.bounded(left, &what, request.send()).await {
            Some(Ok(response)) => response,
            Some(Err(e)) => {
                if e.is_connect() && !e.is_timeout() {
                    // Refused (or no route): an answer, not a forge that is slow.
                    self.wait.refused();
                }
                return Err(transport(call, e, false));
            }
            None => return Err(ForgeError::Timeout { call, sent: true }),
        };
        if !retryable_status(response.status()) {
            // Up, but not an answer yet: a patient wait is renewed once its body is in.
            self.wait.headers();
        }
        Ok((response, call))
    }

    /// The error of a request not even tried: the command already gave up on the forge.
    fn not_tried(&self, call: Call) -> ForgeError {
        let detail = match self.wait.is_patient() {
            true => format!(
                "not tried: the forge did not answer within this command's patience ({}); \
                 give it longer with --patience, $FORGESTATE_PATIENCE or [forge] patience",
                humantime::format_duration(self.wait.patience())
            ),
            false => format!(
                "not tried: the forge did not answer within this command's wait budget ({}); \
                 give it longer with --wait, $FORGESTATE_WAIT or [forge] wait",
                humantime::format_duration(self.wait.budget())
            ),
        };
        ForgeError::Transport {
            call,
            detail,
            sent: false,
        }
    }

    /// Keeps the server's clock from an answer's `Date` (every answer, streamed or read whole):
    /// [`ForgeClient::server_now`] is what record ages are measured on.
    fn note_clock(&self, headers: &reqwest::header::HeaderMap) {
        if let Some(lag) = super::clock::server_lag(headers) {
            let ms = lag.num_milliseconds().max(i64::MIN + 1);
            self.lag_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Reads a whole answer, up to `max_response_bytes`.
    async fn finish(&self, mut response: reqwest::Response, call: Call) -> Result<Raw, ForgeError> {
        let status = response.status();
        let headers = response.headers().clone();
        self.note_clock(&headers);
        let mut bytes = Vec::new();
        // The body is read at the wait rule's pace: to the deadline, and at least its rate.
        let mut pace = self.wait.reading(call.to_string());
        loop {
            let limit = pace.limit();
            let next = match limit.is_zero() {
                true => None,
                false => tokio::time::timeout(limit, response.chunk()).await.ok(),
            };
            let Some(next) = next else {
                tracing::debug!("{call}: the body came too slowly; cut off");
                return Err(ForgeError::Timeout { call, sent: true });
            };
            let Some(chunk) = next.map_err(|e| transport(call.clone(), e, true))? else {
                break;
            };
            if bytes.len() + chunk.len() > self.max_response_bytes {
                return Err(ForgeError::TooLarge {
                    call,
                    cap: self.max_response_bytes,
                });
            }
            pace.got(chunk.len());
            bytes.extend_from_slice(&chunk);
        }
        tracing::debug!(status = status.as_u16(), bytes = bytes.len(), "{call}");
        if !retryable_status(status) {
            self.wait.answered();
        }
        Ok(Raw {
            status,
            headers,
            body: bytes,
            call,
        })
    }

    /// The API url of `path`, each `/`-separated part pushed as one percent-encoded path
    /// segment, so a name can never add a query, a fragment or a `..` step (owner and repo names
    /// are checked when the client is built; this is the second line of defence).
    fn url(&self, path: &str) -> Result<Url, String> {
        let mut url = self.api.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| "the forge url cannot carry a path".to_string())?;
            segments.pop_if_empty();
            for segment in path.split('/') {
                if matches!(segment, "" | "." | "..") {
                    return Err(format!(
                        "{segment:?} cannot be a part of a request path; check the owner and repo"
                    ));
                }
                segments.push(segment);
            }
        }
        Ok(url)
    }

    /// An answer that does not decode: says what it was (its type, when not JSON) and why,
    /// and logs its first bytes under `-v`.
    pub fn decode_error(&self, raw: &Raw, e: &serde_json::Error) -> ForgeError {
        let kind = answer_kind(&raw.headers);
        let start = String::from_utf8_lossy(&raw.body[..raw.body.len().min(200)]).into_owned();
        tracing::debug!(
            "{}: the answer does not decode ({e}); it starts: {:?}",
            raw.call,
            scrub(&start, self.token.as_ref())
        );
        ForgeError::Decode {
            call: raw.call.clone(),
            detail: format!("{kind}{e}"),
        }
    }

    /// Maps a non-success answer to an error, by status alone, keeping the server's words minus
    /// any copy of the token.
    pub fn status_error(&self, raw: Raw) -> ForgeError {
        let message = serde_json::from_slice::<ApiError>(&raw.body)
            .map(|e| e.message)
            .unwrap_or_default();
        let message = scrub(&message, self.token.as_ref());
        status_error(raw.call, raw.status, &raw.headers, message)
    }
}

/// "a text/html answer: " when the answer says it is not JSON, else nothing.
fn answer_kind(headers: &HeaderMap) -> String {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .filter(|t| !t.contains("json"))
        .map(|t| format!("a {t} answer: "))
        .unwrap_or_default()
}

/// When an attempt's outcome is worth another: the delay the server asked for, and why.
fn worth_retrying(
    result: &Result<Raw, ForgeError>,
) -> Option<(Option<std::time::Duration>, String)> {
    match result {
        Ok(raw) if retryable_status(raw.status) => Some((
            retry_after(&raw.headers),
            format!("the forge answered {}", raw.status.as_u16()),
        )),
        Err(e) if e.is_transient() => Some((None, e.to_string())),
        _ => None,
    }
}

fn method_name(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PATCH => "PATCH",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        _ => "REQUEST",
    }
}

#[cfg(test)]
mod tests {
    use super::ForgeClient;
    use reqwest::Method;
    use std::time::Duration;

    #[tokio::test]
    async fn a_refused_connection_is_an_answer_that_ends_the_tries() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let hour = Duration::from_secs(3600);
        let c = super::ForgeClientBuilder {
            policy: crate::forge::retry::RetryPolicy::full(hour),
            wait: crate::forge::wait::Wait::with_patience(hour, hour, Duration::from_millis(500)),
            ..ForgeClient::builder(format!("http://127.0.0.1:{port}"))
        }
        .build()
        .unwrap();
        c.wait().restart();
        // A hang guard, not a speed check: without the rule the tries would go on for an hour.
        let tried = tokio::time::timeout(
            Duration::from_secs(60),
            c.raw(Method::GET, "version", &[], None),
        )
        .await
        .expect("a refused connection ends the tries");
        assert!(tried.is_err());
        assert!(c.wait().spent(), "the command gave up on the forge");
    }

    #[test]
    fn request_paths_are_built_from_encoded_segments() {
        let c = ForgeClient::builder("http://127.0.0.1:9/sub")
            .build()
            .unwrap();
        let url = c.url("repos/o?x=1#/r/issues").unwrap();
        assert_eq!(url.path(), "/sub/api/v1/repos/o%3Fx=1%23/r/issues");
        assert_eq!((url.query(), url.fragment()), (None, None));
        for bad in ["repos/../r/issues", "repos/./r/issues", "repos//r/issues"] {
            let err = c.url(bad).unwrap_err();
            assert!(err.contains("owner and repo"), "{bad}: {err}");
        }
        assert_eq!(c.url("version").unwrap().path(), "/sub/api/v1/version");
    }
}
