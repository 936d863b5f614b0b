//! Forge failures, worded by HTTP status (never by the server's message text, which is for
//! humans and changes between versions), each with the next step to take.

use thiserror::Error;

/// Which request failed, for messages: `POST /repos/acme/app/issues/7/comments`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The HTTP method.
    pub method: &'static str,
    /// The path below `/api/v1/`.
    pub path: String,
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// A forge request failed. Each message names the call and what to do about it.
#[derive(Debug, Error)]
pub enum ForgeError {
    /// 401: the token was refused.
    #[error("{call}: the forge rejected the token (401{}); check FORGESTATE_TOKEN or token_file", server(.message))]
    Unauthorized {
        /// The request that failed.
        call: Call,
        /// The server's message, when it sent one.
        message: String,
    },
    /// 403: the token lacks a scope, or its user lacks access.
    #[error(
        "{call}: forbidden (403{}); the token needs the write:issue and read:user scopes, and its \
         user needs write access to the repository's issues",
        server(.message)
    )]
    Forbidden {
        /// The request that failed.
        call: Call,
        /// The server's message, when it sent one.
        message: String,
    },
    /// 404: no such forge, repository or issue.
    #[error("{call}: not found (404{}); check the forge url, owner and repo", server(.message))]
    NotFound {
        /// The request that failed.
        call: Call,
        /// The server's message, when it sent one.
        message: String,
    },
    /// 422: the forge refused the request's content.
    #[error("{call}: the forge rejected the request (422{})", server(.message))]
    Rejected {
        /// The request that failed.
        call: Call,
        /// The server's message, when it sent one.
        message: String,
    },
    /// A 3xx answer: forgestate never follows redirects (they would drop the token or change the method).
    #[error("{call}: the forge redirected ({status}) to {location}; {hint}")]
    Redirected {
        /// The request that failed.
        call: Call,
        /// The HTTP status.
        status: u16,
        /// Where the forge pointed.
        location: String,
        /// The likely cause: a renamed repository when the forge points at another repository's
        /// API path, else a proxy or login page in front of the forge.
        hint: &'static str,
    },
    /// Any other unexpected status.
    #[error("{call}: the forge answered {status}{}", server(.message))]
    Status {
        /// The request that failed.
        call: Call,
        /// The HTTP status.
        status: u16,
        /// The server's message, when it sent one.
        message: String,
    },
    /// No answer in time.
    #[error("{call}: timed out waiting for the forge")]
    Timeout {
        /// The request that failed.
        call: Call,
        /// Whether the request may have reached the server.
        sent: bool,
    },
    /// The connection failed (DNS, refused, reset).
    #[error("{call}: cannot reach the forge: {detail}")]
    Transport {
        /// The request that failed.
        call: Call,
        /// The underlying cause.
        detail: String,
        /// Whether the request may have reached the server.
        sent: bool,
    },
    /// The answer is larger than the configured cap (a comment list: the bodies kept from it).
    #[error(
        "{call}: the forge's answer is over {cap} bytes (of a comment list, the bodies kept \
         from it); refusing to read it (raise max_response_mib, or rotate the session issue)"
    )]
    TooLarge {
        /// The request that failed.
        call: Call,
        /// The cap, in bytes.
        cap: usize,
    },
    /// The answer is not the JSON the endpoint documents.
    #[error(
        "{call}: the forge's answer is not what forgestate expects ({detail}); check that the \
         forge url is the Forgejo or Gitea server itself, not a proxy or login page"
    )]
    Decode {
        /// The request that failed.
        call: Call,
        /// The underlying cause.
        detail: String,
    },
    /// The TLS handshake failed: a certificate the client does not trust, a protocol error, or
    /// an `https://` url answered by a plain-HTTP server. Retrying cannot fix any of these.
    #[error(
        "{call}: TLS with the forge failed ({detail}); retrying cannot fix this: check that the \
         url's scheme matches the server (https:// to a plain-http server fails like this), \
         that its certificate is valid for its name, and that this machine trusts its issuer"
    )]
    Tls {
        /// The request that failed.
        call: Call,
        /// The underlying cause.
        detail: String,
    },
    /// A paginated list never ends: the server keeps promising another page.
    #[error(
        "{call}: the forge's list never ends ({detail}); giving up on it: the forge or a proxy \
         in front of it is misbehaving, try again later or report it to its administrator"
    )]
    Paging {
        /// The request that failed.
        call: Call,
        /// What showed the list does not end.
        detail: String,
    },
    /// A comment list came back with fewer elements than its `X-Total-Count` (both lists send
    /// every match in one answer): a server or proxy cut it short, or paginates it.
    #[error(
        "{call}: the forge sent {seen} of the {total} comments its X-Total-Count promised; a \
         server or proxy in front of it is cutting the list short, and forgestate never answers \
         from part of a thread: check the proxy's response size limits, or report it"
    )]
    Incomplete {
        /// The request that failed.
        call: Call,
        /// The elements the answer held.
        seen: u64,
        /// What its `X-Total-Count` said.
        total: u64,
    },
    /// The session issue's own list, without the `X-Total-Count` that vouches for it, held
    /// fewer comments than the issue counts, read twice (the list sends every plain comment in
    /// one answer, and the issue's `comments` counts them): a proxy cut it short or served an
    /// old copy.
    #[error(
        "{call}: the forge listed {seen} comments, without the X-Total-Count header it always \
         sends, but the issue counts {count}; a proxy in front of it is cutting the list short \
         or serving an old copy of it, and \
         forgestate never answers from part of a thread: check the proxy's response size limits \
         and caching, or report it"
    )]
    ShortList {
        /// The request that came back short.
        call: Call,
        /// The elements the answer held.
        seen: u64,
        /// The issue's `comments`.
        count: u64,
    },
    /// The client could not be set up (a bad URL, refused settings); nothing was sent.
    #[error("{0}")]
    Setup(String),
    /// A read found no session issue, open or closed: the thread holds nothing yet (a write
    /// creates it when `auto_init` allows).
    #[error("{0}")]
    NoSessionIssue(String),
}

fn server(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// What a request found: `None` for a 404.
pub(crate) fn found<T>(result: Result<T, ForgeError>) -> Result<Option<T>, ForgeError> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(ForgeError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

impl ForgeError {
    /// The HTTP status, when the forge answered at all.
    pub fn status(&self) -> Option<u16> {
        match self {
            ForgeError::Unauthorized { .. } => Some(401),
            ForgeError::Forbidden { .. } => Some(403),
            ForgeError::NotFound { .. } => Some(404),
            ForgeError::Rejected { .. } => Some(422),
            ForgeError::Redirected { status, .. } | ForgeError::Status { status, .. } => {
                Some(*status)
            }
            _ => None,
        }
    }

    /// True for failures a retry may fix: no answer at all, or a 408/429/5xx answer.
    pub fn is_transient(&self) -> bool {
        match self {
            ForgeError::Timeout { .. } | ForgeError::Transport { .. } => true,
            ForgeError::Status { status, .. } => {
                reqwest::StatusCode::from_u16(*status).is_ok_and(super::retry::retryable_status)
            }
            _ => false,
        }
    }

    /// True when a write may have been carried out even though it failed: the request went out
    /// and no clear refusal came back.
    pub fn maybe_committed(&self) -> bool {
        match self {
            ForgeError::Timeout { sent, .. } | ForgeError::Transport { sent, .. } => *sent,
            ForgeError::Status { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// True when the fix is in the configuration or permissions, not a retry.
    pub fn is_setup_problem(&self) -> bool {
        matches!(
            self,
            ForgeError::Unauthorized { .. }
                | ForgeError::Forbidden { .. }
                | ForgeError::NotFound { .. }
                | ForgeError::Redirected { .. }
                | ForgeError::TooLarge { .. }
                | ForgeError::Decode { .. }
                | ForgeError::Incomplete { .. }
                | ForgeError::ShortList { .. }
                | ForgeError::Tls { .. }
                | ForgeError::Setup(_)
                | ForgeError::NoSessionIssue(_)
        )
    }
}
