//! Secrets never reach the terminal: every line forgestate writes on stderr, its log lines and
//! its `--json` error documents pass through one scrubber, which knows the token in use and the
//! shapes of common secrets (URL passwords, `ghp_…` tokens, private keys). A secret typed by
//! mistake into a flag (`--set "$FORGESTATE_TOKEN"`) is echoed as `[REDACTED]`.

use std::path::Path;
use std::sync::OnceLock;

use secrecy::SecretString;

use forgestate::format::Redactor;

static SCRUBBER: OnceLock<Redactor> = OnceLock::new();

/// Learns the token in use: `$FORGESTATE_TOKEN` and the `--token-file` given, when readable,
/// and `$FORGESTATE_SIGNING_KEY`.
/// Called once, before anything is printed.
pub fn install(token_file: Option<&Path>) {
    let mut redactor = Redactor::default();
    let clean = |t: &str| t.trim().trim_start_matches('\u{feff}').trim().to_string();
    if let Ok(token) = std::env::var("FORGESTATE_TOKEN") {
        redactor = redactor.with_secret(&SecretString::from(clean(&token)));
    }
    // The signing key is a secret too (`docs/security.md`).
    if let Ok(key) = std::env::var("FORGESTATE_SIGNING_KEY") {
        redactor = redactor.with_secret(&SecretString::from(clean(&key)));
    }
    if let Some(text) = token_file.and_then(|p| std::fs::read_to_string(p).ok()) {
        redactor = redactor.with_secret(&SecretString::from(clean(&text)));
    }
    let _ = SCRUBBER.set(redactor);
}

/// `text` with every secret the scrubber knows replaced.
pub fn scrub(text: &str) -> String {
    let mut out = text.to_string();
    if let Some(redactor) = SCRUBBER.get() {
        redactor.redact_text(&mut out);
    }
    out
}

/// An answer's `warnings` and `cause` with every secret the scrubber knows replaced: they may
/// quote a server's words, like every line that leaves (the MCP server's results and
/// `forgestate call`'s answers).
pub fn scrub_notes(value: &mut serde_json::Value) {
    use serde_json::Value;
    if let Some(ws) = value.get_mut("warnings").and_then(Value::as_array_mut) {
        for w in ws.iter_mut() {
            if let Value::String(s) = w {
                *s = scrub(s);
            }
        }
    }
    if let Some(Value::String(cause)) = value.get_mut("cause") {
        *cause = scrub(cause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_messages_are_replaced() {
        // No token installed in unit tests: the shapes alone.
        let _ = SCRUBBER.set(Redactor::default());
        let said = scrub("cannot reach https://bob:hunter2pw@forge.example.com/x");
        assert!(!said.contains("hunter2pw"), "{said}");
        assert!(scrub("plain words stay").eq("plain words stay"));
    }
}
