//! The HTTP client for the Forgejo/Gitea API: one builder, one request path, typed answers.
//!
//! Built once (octocrab-style) with the base URL, the token and timeouts. The token lives in a
//! `SecretString` and only ever travels in an `Authorization` header marked sensitive, never in a
//! URL, so it cannot leak through reqwest's error messages. Redirects are never followed: a
//! renamed repository answers 301, and a followed POST would silently become a GET.

use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, LOCATION, USER_AGENT};
use reqwest::{Method, StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{Call, ForgeError};
use super::models::ApiError;

/// Builds a [`ForgeClient`].
pub struct ForgeClientBuilder {
    base_url: String,
    token: Option<SecretString>,
    connect_timeout: Duration,
    request_timeout: Duration,
}

impl ForgeClientBuilder {
    pub fn token(mut self, token: SecretString) -> Self {
        self.token = Some(token);
        self
    }

    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    pub fn request_timeout(mut self, t: Duration) -> Self {
        self.request_timeout = t;
        self
    }

    pub fn build(self) -> Result<ForgeClient, ForgeError> {
        let mut base = Url::parse(self.base_url.trim()).map_err(|e| {
            ForgeError::Setup(format!("forge url {:?} is not a URL: {e}", self.base_url))
        })?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(ForgeError::Setup(format!(
                "forge url {base} must start with https:// (or http://)"
            )));
        }
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let api = base
            .join("api/v1/")
            .map_err(|e| ForgeError::Setup(format!("forge url {base}: {e}")))?;
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let agent = concat!("forgestate/", env!("CARGO_PKG_VERSION"));
        headers.insert(USER_AGENT, HeaderValue::from_static(agent));
        if let Some(token) = &self.token {
            let mut value = HeaderValue::from_str(&format!("token {}", token.expose_secret()))
                .map_err(|_| {
                    ForgeError::Setup(
                        "the token contains characters not allowed in a header; \
                                       check FORGESTATE_TOKEN or token_file"
                            .to_string(),
                    )
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.connect_timeout)
            .timeout(self.request_timeout)
            .build()
            .map_err(|e| ForgeError::Setup(format!("cannot build the HTTP client: {e}")))?;
        Ok(ForgeClient {
            http,
            base,
            api,
            token: self.token,
        })
    }
}

/// A Forgejo/Gitea API client.
#[derive(Clone)]
pub struct ForgeClient {
    http: reqwest::Client,
    base: Url,
    api: Url,
    /// Kept only to scrub it from the server's error messages (Forgejo echoes unknown tokens).
    token: Option<SecretString>,
}

impl std::fmt::Debug for ForgeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForgeClient")
            .field("base", &self.base.as_str())
            .finish_non_exhaustive()
    }
}

/// A decoded answer and its headers (for pagination).
pub struct Answer<T> {
    pub value: T,
    pub headers: HeaderMap,
}

impl ForgeClient {
    pub fn builder(base_url: impl Into<String>) -> ForgeClientBuilder {
        ForgeClientBuilder {
            base_url: base_url.into(),
            token: None,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
        }
    }

    /// The instance's web root, e.g. `https://forge.example.com/`.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// Sends one request to `path` (relative to `/api/v1/`) and decodes a JSON answer.
    /// Only the statuses in `ok` count as success.
    pub async fn send<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
        ok: &[StatusCode],
    ) -> Result<Answer<T>, ForgeError> {
        let (status, headers, bytes, call) = self.raw(method, path, query, body).await?;
        if !ok.contains(&status) {
            return Err(self.status_error(call, status, &headers, &bytes));
        }
        let value = serde_json::from_slice(&bytes).map_err(|e| ForgeError::Decode {
            call,
            detail: e.to_string(),
        })?;
        Ok(Answer { value, headers })
    }

    /// Sends one request and returns the status, headers and body, whatever the status.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>, Call), ForgeError> {
        let call = Call {
            method: method_name(&method),
            path: format!("/{path}"),
        };
        let url = self
            .api
            .join(path)
            .map_err(|e| ForgeError::Setup(format!("{call}: {e}")))?;
        let mut request = self.http.request(method, url).query(query);
        if let Some(body) = &body {
            request = request.json(body);
        }
        tracing::debug!("{call}");
        let response = request
            .send()
            .await
            .map_err(|e| transport(call.clone(), e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| transport(call.clone(), e))?;
        tracing::debug!(status = status.as_u16(), bytes = bytes.len(), "{call}");
        Ok((status, headers, bytes.to_vec(), call))
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

fn transport(call: Call, e: reqwest::Error) -> ForgeError {
    if e.is_timeout() {
        return ForgeError::Timeout { call };
    }
    // Name the root cause, without the URL reqwest adds (the call already says where).
    let e = e.without_url();
    let mut detail = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    ForgeError::Transport { call, detail }
}

impl ForgeClient {
    /// Maps a non-success answer to an error, by status alone, keeping the server's words minus
    /// any copy of the token.
    pub fn status_error(
        &self,
        call: Call,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> ForgeError {
        let message = serde_json::from_slice::<ApiError>(body)
            .map(|e| e.message)
            .unwrap_or_default();
        status_error(call, status, headers, scrub(&message, self.token.as_ref()))
    }
}

/// Removes the token, and whatever follows the server's `[sha: ` marker, from a message.
fn scrub(message: &str, token: Option<&SecretString>) -> String {
    let mut text = match token.map(|t| t.expose_secret()).filter(|t| !t.is_empty()) {
        Some(t) => message.replace(t, "[REDACTED]"),
        None => message.to_string(),
    };
    if let Some(start) = text.find("[sha: ") {
        let end = text[start..]
            .find(']')
            .map_or(text.len(), |i| start + i + 1);
        text.replace_range(start..end, "[sha: REDACTED]");
    }
    text
}

fn status_error(
    call: Call,
    status: StatusCode,
    headers: &HeaderMap,
    message: String,
) -> ForgeError {
    match status.as_u16() {
        401 => ForgeError::Unauthorized { call, message },
        403 => ForgeError::Forbidden { call, message },
        404 => ForgeError::NotFound { call, message },
        422 => ForgeError::Rejected { call, message },
        s @ (301 | 302 | 307 | 308) => {
            let location = headers
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("(no Location header)")
                .to_string();
            ForgeError::Redirected {
                call,
                status: s,
                location,
            }
        }
        s => ForgeError::Status {
            call,
            status: s,
            message,
        },
    }
}
