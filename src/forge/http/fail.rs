//! Failures as the forge's errors: a transport failure (timeout, refused, reset, TLS) or an
//! answer's status, each naming the request.

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, LOCATION};

use crate::forge::error::{Call, ForgeError};

/// `reading`: the request was sent and the answer was being read, so it may have been acted on.
pub(super) fn transport(call: Call, e: reqwest::Error, reading: bool) -> ForgeError {
    let sent = reading || !e.is_connect();
    if e.is_timeout() {
        return ForgeError::Timeout { call, sent };
    }
    // Name the root cause, without the URL reqwest adds (the call already says where).
    let e = e.without_url();
    let mut detail = e.to_string();
    let mut tls = false;
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        detail = s.to_string();
        tls |= is_tls_failure(s);
        source = s.source();
    }
    if tls && !sent {
        return ForgeError::Tls { call, detail };
    }
    ForgeError::Transport { call, detail, sent }
}

/// A TLS handshake failure: the TLS layer (rustls, through tokio-rustls) reports every
/// certificate and protocol error, including plain-HTTP bytes where a TLS record was expected,
/// as an `InvalidData` IO error while connecting, which the connector wraps in another IO error
/// (whose `source()` skips it, so each wrapper is opened by hand). Resets, refusals and EOFs
/// have other kinds and stay transient.
fn is_tls_failure(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut io = e.downcast_ref::<std::io::Error>();
    while let Some(e) = io {
        if e.kind() == std::io::ErrorKind::InvalidData {
            return true;
        }
        io = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<std::io::Error>());
    }
    false
}

pub(super) fn status_error(
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
            let hint = redirect_hint(&location);
            ForgeError::Redirected {
                call,
                status: s,
                location,
                hint,
            }
        }
        s => ForgeError::Status {
            call,
            status: s,
            message,
        },
    }
}

/// Why a forge redirects: to another repository's API path when the repository was renamed or
/// moved (Forgejo's own answer); anywhere else (a login page, another host) it is most likely
/// a proxy that wants a login, or a url that is not the forge's API.
fn redirect_hint(location: &str) -> &'static str {
    match location.contains("/api/v1/repos/") {
        true => "the repository was probably renamed or moved: update owner/repo",
        false => {
            "not to the forge's API: most likely a proxy or single sign-on in front of the forge \
             that wants a login (the token does not pass it), or a forge url that is not the \
             forge's own; check the url and that API requests with a token reach the forge"
        }
    }
}
