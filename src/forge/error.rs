//! Forge failures, worded by HTTP status (never by the server's message text, which is for
//! humans and changes between versions), each with the next step to take.

use thiserror::Error;

/// Which request failed, for messages: `POST /repos/acme/app/issues/7/comments`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub method: &'static str,
    pub path: String,
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

#[derive(Debug, Error)]
pub enum ForgeError {
    #[error("{call}: the forge rejected the token (401{}); check FORGESTATE_TOKEN or token_file", server(.message))]
    Unauthorized { call: Call, message: String },
    #[error(
        "{call}: forbidden (403{}); the token needs the write:issue and read:user scopes, and its \
         user needs write access to the repository's issues",
        server(.message)
    )]
    Forbidden { call: Call, message: String },
    #[error("{call}: not found (404{}); check the forge url, owner and repo", server(.message))]
    NotFound { call: Call, message: String },
    #[error("{call}: the forge rejected the request (422{})", server(.message))]
    Rejected { call: Call, message: String },
    #[error(
        "{call}: the forge redirected ({status}) to {location}; the repository was probably \
         renamed or moved: update owner/repo"
    )]
    Redirected {
        call: Call,
        status: u16,
        location: String,
    },
    #[error("{call}: the forge answered {status}{}", server(.message))]
    Status {
        call: Call,
        status: u16,
        message: String,
    },
    #[error("{call}: timed out waiting for the forge")]
    Timeout { call: Call, sent: bool },
    #[error("{call}: cannot reach the forge: {detail}")]
    Transport {
        call: Call,
        detail: String,
        sent: bool,
    },
    #[error(
        "{call}: the forge's answer is over {cap} bytes; refusing to read it (raise \
         max_response_mib, or rotate the session issue)"
    )]
    TooLarge { call: Call, cap: usize },
    #[error(
        "{call}: the forge's answer is not what forgestate expects ({detail}); check that the \
         forge url is the Forgejo or Gitea server itself, not a proxy or login page"
    )]
    Decode { call: Call, detail: String },
    /// The TLS handshake failed: a certificate the client does not trust, a protocol error, or
    /// an `https://` url answered by a plain-HTTP server. Retrying cannot fix any of these.
    #[error(
        "{call}: TLS with the forge failed ({detail}); retrying cannot fix this: check that the \
         url's scheme matches the server (https:// to a plain-http server fails like this), \
         that its certificate is valid for its name, and that this machine trusts its issuer"
    )]
    Tls { call: Call, detail: String },
    #[error("{0}")]
    Setup(String),
}

fn server(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
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
                matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
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
                | ForgeError::Tls { .. }
                | ForgeError::Setup(_)
        )
    }
}
