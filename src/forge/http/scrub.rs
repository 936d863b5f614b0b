//! Keeping the token out of the server's words: Forgejo echoes an unknown token in its error
//! message, and a `[sha: ...]` marker can carry it too.

use secrecy::{ExposeSecret, SecretString};

/// `text` with every occurrence of `needle`, in any ASCII letter case, replaced by `with` (a
/// server may echo the token upper-cased). ASCII case folding keeps byte offsets, so positions
/// found in the folded copy are valid in `text`.
fn replace_ignoring_ascii_case(text: &str, needle: &str, with: &str) -> String {
    let folded = text.to_ascii_lowercase();
    let needle = needle.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(pos) = folded[at..].find(&needle) {
        out.push_str(&text[at..at + pos]);
        out.push_str(with);
        at += pos + needle.len();
    }
    out.push_str(&text[at..]);
    out
}

/// Removes the token, and whatever follows the server's `[sha: ` marker, from a message.
pub(super) fn scrub(message: &str, token: Option<&SecretString>) -> String {
    let mut text = match token.map(|t| t.expose_secret()).filter(|t| !t.is_empty()) {
        Some(t) => replace_ignoring_ascii_case(message, t, "[REDACTED]"),
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

#[cfg(test)]
mod tests {
    use super::{SecretString, scrub};

    #[test]
    fn an_echoed_token_is_scrubbed_in_any_letter_case() {
        let token = SecretString::from("0123456789abcdef0123456789abcdef01234567");
        let said = scrub(
            "no user for token 0123456789ABCDEF0123456789ABCDEF01234567 (Ünïcode ok)",
            Some(&token),
        );
        assert_eq!(said, "no user for token [REDACTED] (Ünïcode ok)");
    }
}
