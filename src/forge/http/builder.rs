//! Building a [`ForgeClient`]: the base URL checked and normalised, the token in a sensitive
//! header, timeouts, no redirects.
//!
//! The base URL must carry no credentials (`https://user:pass@host` is refused without echoing
//! them, so a password never reaches a message, a warning or a directory name: the token alone
//! authenticates), plain `http://` is refused except to loopback unless allowed, and a trailing
//! `/api/v1` is dropped (the client adds it to every request).

use std::net::IpAddr;
use std::sync::LazyLock;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, USER_AGENT};
use secrecy::{ExposeSecret, SecretString};

use super::ForgeClient;
use crate::defaults;
use crate::forge::error::ForgeError;
use crate::forge::retry::{Notice, RetryPolicy};
use crate::forge::wait::Wait;

/// Builds a [`ForgeClient`]: [`ForgeClient::builder`] holds the defaults, and a caller sets
/// what it needs (struct update syntax) before [`ForgeClientBuilder::build`].
pub struct ForgeClientBuilder {
    /// The forge's address, as given (checked and normalised by `build`).
    pub base_url: String,
    /// The API token, sent in a sensitive header.
    pub token: Option<SecretString>,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long one request may take in all.
    pub request_timeout: Duration,
    /// The retries of one request (default: within 30 s, [`RetryPolicy::full`]).
    pub policy: RetryPolicy,
    /// Answers larger than this are refused.
    pub max_response_bytes: usize,
    /// Allow `http://` to hosts other than loopback (the token then crosses the network in clear).
    pub allow_insecure_http: bool,
    /// The command's wait budget, patience and quick attempt after an outage; see `wait.rs`.
    pub wait: Wait,
}

impl ForgeClientBuilder {
    pub fn build(self) -> Result<ForgeClient, ForgeError> {
        let raw = self.base_url.trim();
        let mut base = Url::parse(raw).map_err(|e| {
            // The text may hold a password the parser could not separate: never echo it then.
            let shown = if raw.contains('@') {
                String::new()
            } else {
                format!(" {raw:?}")
            };
            ForgeError::Setup(format!(
                "forge url{shown} is not a URL: {e}; give the forge's web address with its \
                 scheme, such as https://forge.example.com"
            ))
        })?;
        if !base.username().is_empty() || base.password().is_some() {
            let _ = base.set_username("");
            let _ = base.set_password(None);
            return Err(ForgeError::Setup(format!(
                "the forge url holds a user name or password; remove the `user:password@` part \
                 (leaving {base}) and give the token in $FORGESTATE_TOKEN or a token file"
            )));
        }
        if base.query().is_some() || base.fragment().is_some() {
            // A query such as `?access_token=...` may hold the token: never echo it.
            base.set_query(None);
            base.set_fragment(None);
            return Err(ForgeError::Setup(format!(
                "the forge url has a query or fragment (`?...` or `#...`), which forgestate \
                 never sends; remove it (leaving {base}) and give the token in $FORGESTATE_TOKEN \
                 or a token file"
            )));
        }
        let trimmed = base.path().trim_end_matches('/');
        if let Some(root) = trimmed.strip_suffix("/api/v1") {
            let root = format!("{root}/");
            tracing::debug!("dropping /api/v1 from the forge url: it is added to every request");
            base.set_path(&root);
        }
        match base.scheme() {
            "https" => {}
            "http" if self.allow_insecure_http || is_loopback(&base) => {}
            "http" => {
                return Err(ForgeError::Setup(format!(
                    "refusing to send the token over plain http to {}; use https://, or pass \
                     --allow-insecure-http (allow_insecure_http = true in [forge]) if you must",
                    base.host_str().unwrap_or("the forge")
                )));
            }
            _ => {
                // "user:password@host" parses as a URL whose scheme is the user name.
                let shown = if raw.contains('@') {
                    String::new()
                } else {
                    format!(" {base}")
                };
                return Err(ForgeError::Setup(format!(
                    "forge url{shown} must start with https://"
                )));
            }
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
                        "the token contains characters not allowed in a header; check \
                         FORGESTATE_TOKEN or token_file"
                            .to_string(),
                    )
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        // Every request goes to `base` (redirects are not followed): a plain-http forge (on
        // loopback, or allowed) never needs the system's TLS roots, whose loading is most of a
        // warm command's own time.
        let tls = base.scheme() == "https";
        let timeout = self.request_timeout;
        let build = move |connect: Duration, headers: HeaderMap| {
            reqwest::Client::builder()
                .default_headers(headers)
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(connect)
                .timeout(timeout)
                .tls_built_in_root_certs(tls)
                .build()
                .map_err(|e| ForgeError::Setup(format!("cannot build the HTTP client: {e}")))
        };
        let http = build(self.connect_timeout, headers.clone())?;
        let short_timeout = self.connect_timeout.min(SHORT_CONNECT);
        let quick_timeout = self.connect_timeout.min(self.wait.quick());
        let quick_headers = headers.clone();
        let short: LazyClient = LazyLock::new(Box::new(move || build(short_timeout, headers)));
        let quick: LazyClient =
            LazyLock::new(Box::new(move || build(quick_timeout, quick_headers)));
        Ok(ForgeClient {
            http,
            short_connect: std::sync::Arc::new(short),
            quick_connect: std::sync::Arc::new(quick),
            base,
            api,
            token: self.token,
            policy: self.policy,
            request_timeout: self.request_timeout,
            max_response_bytes: self.max_response_bytes,
            notice: Notice::default(),
            lag_ms: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(i64::MIN)),
            wait: self.wait,
        })
    }
}

/// A client built on first use: the short-connect and quick-connect ones, which most commands
/// never use (each client built loads the TLS roots again).
pub(super) type LazyClient = LazyLock<
    Result<reqwest::Client, ForgeError>,
    Box<dyn FnOnce() -> Result<reqwest::Client, ForgeError> + Send>,
>;

/// The connect timeout of a drain during a backoff (see `RetryPolicy::probe`).
pub const SHORT_CONNECT: Duration = Duration::from_millis(1500);

fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or("");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl ForgeClient {
    pub fn builder(base_url: impl Into<String>) -> ForgeClientBuilder {
        ForgeClientBuilder {
            base_url: base_url.into(),
            token: None,
            connect_timeout: Duration::from_secs(defaults::CONNECT_TIMEOUT_SECS),
            request_timeout: Duration::from_secs(defaults::REQUEST_TIMEOUT_SECS),
            policy: RetryPolicy::full(Duration::from_secs(defaults::RETRY_BUDGET_SECS)),
            max_response_bytes: defaults::MAX_RESPONSE_MIB * 1024 * 1024,
            allow_insecure_http: false,
            wait: Wait::default(),
        }
    }
}
