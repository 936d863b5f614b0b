//! Secrets recognised by their shape inside any string: given secret values (the forge token in
//! use), passwords in URLs, PEM private keys and common token formats.
//!
//! Only the secret part of a string is replaced (`https://user:[REDACTED]@host/x`), so the rest of
//! the value stays useful. Pure string work; `redact.rs` decides where it is applied.

use super::assign::REDACTED;
use super::assign::assignments;
use super::invisible::strip_zero_width;

/// Replaces every secret found in `text` with [`REDACTED`]. Returns the new text and how many
/// secrets were replaced, or `None` when there were none. `secret_key` says which assigned names
/// (`NAME=value`) hold secrets. Zero-width characters inside a secret do not hide it: the search
/// runs over the text without them, and a find covers them too.
pub(crate) fn scrub(
    text: &str,
    secrets: &[&str],
    secret_key: &dyn Fn(&str) -> bool,
) -> Option<(String, u64)> {
    let mut spans = Vec::new();
    match strip_zero_width(text) {
        None => find(text, secrets, secret_key, &mut spans),
        Some((clean, map)) => {
            let mut found = Vec::new();
            find(&clean, secrets, secret_key, &mut found);
            spans.extend(
                found
                    .into_iter()
                    .filter(|&(start, end)| start < end)
                    .filter_map(|(start, end)| Some((*map.get(start)?, map.get(end - 1)? + 1))),
            );
        }
    }
    if spans.is_empty() {
        return None;
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(start, end) in &merged {
        out.push_str(&text[at..start]);
        out.push_str(REDACTED);
        at = end;
    }
    out.push_str(&text[at..]);
    Some((out, merged.len() as u64))
}

/// Every secret's span in `text`.
fn find(
    text: &str,
    secrets: &[&str],
    secret_key: &dyn Fn(&str) -> bool,
    spans: &mut Vec<(usize, usize)>,
) {
    // ASCII case folding keeps every byte where it was, so offsets in `folded` are offsets in
    // `text`: a token pasted in upper case (`F00DFEED...`) is still the token.
    let folded = text.to_ascii_lowercase();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        let secret = secret.to_ascii_lowercase();
        spans.extend(
            folded
                .match_indices(&secret)
                .map(|(at, s)| (at, at + s.len())),
        );
    }
    url_credentials(text, spans);
    pem_private_keys(text, spans);
    token_formats(text, spans);
    bearer(text, spans);
    assignments(text, secret_key, spans);
    super::assign::colon_assignments(text, secret_key, spans);
    super::assign::flag_values(text, secret_key, spans);
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// True when `at` starts a word: the byte before it is not a letter, a digit or `_`. A `-`
/// starts a word, as everywhere else in docs/redaction.md's table (`build-AKIA…`); `_` does
/// not (`task_test_…` is no Stripe key).
fn at_boundary(text: &str, at: usize) -> bool {
    at == 0 || {
        let before = text.as_bytes()[at - 1];
        !(before.is_ascii_alphanumeric() || before == b'_')
    }
}

/// Length of the run of bytes from `from` satisfying `ok`.
fn run(text: &str, from: usize, ok: impl Fn(u8) -> bool) -> usize {
    text.as_bytes()[from..]
        .iter()
        .take_while(|&&b| ok(b))
        .count()
}

/// `scheme://user:password@host`: the password. `scheme://<long token>@host`: the token.
fn url_credentials(text: &str, spans: &mut Vec<(usize, usize)>) {
    for (i, _) in text.match_indices("://") {
        let start = i + 3;
        let rest = &text[start..];
        let len = rest
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`')
            })
            .unwrap_or(rest.len());
        let authority = &rest[..len];
        let Some(at) = authority.rfind('@') else {
            continue;
        };
        let userinfo = &authority[..at];
        match userinfo.find(':') {
            Some(colon) => {
                let password = &userinfo[colon + 1..];
                if !password.is_empty() && password != REDACTED {
                    spans.push((start + colon + 1, start + at));
                }
            }
            // `https://<token>@github.com` is how tokens end up in git remotes; `git@` is not.
            None if userinfo.len() >= 20 && userinfo.bytes().all(is_token_byte) => {
                spans.push((start, start + at));
            }
            None => {}
        }
    }
}

/// `-----BEGIN ... PRIVATE KEY-----` up to its `-----END ...-----` line, or to the end.
fn pem_private_keys(text: &str, spans: &mut Vec<(usize, usize)>) {
    const BEGIN: &str = "-----BEGIN ";
    for (i, _) in text.match_indices(BEGIN) {
        let label_start = i + BEGIN.len();
        let line_end = text[label_start..]
            .find('\n')
            .map_or(text.len(), |n| label_start + n);
        let Some(label_len) = text[label_start..line_end].find("-----") else {
            continue;
        };
        let label = &text[label_start..label_start + label_len];
        if !label.contains("PRIVATE KEY") {
            continue;
        }
        let end_marker = format!("-----END {label}-----");
        let end = text[label_start..]
            .find(&end_marker)
            .map_or(text.len(), |n| label_start + n + end_marker.len());
        spans.push((i, end));
    }
}

/// A token format: a prefix, then at least this many bytes that the function accepts; and
/// whether the prefix is distinctive enough to be found inside a word (`x-ghp_…`, `id_ghp_…`,
/// `1ghp_…`: nothing else spells it followed by that many token characters). The short or
/// word-like ones (`sk-`, `hf_`, `AKIA`, `sk_test_`, as in `task_test_…`) need a word boundary.
type Format = (&'static str, usize, fn(u8) -> bool, bool);

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn alnum_underscore(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}
fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

/// Widely used token formats whose prefix makes them recognisable.
const FORMATS: &[Format] = &[
    // GitHub: personal, OAuth, user-to-server, server-to-server, refresh; fine-grained PATs.
    ("ghp_", 30, alnum, true),
    ("gho_", 30, alnum, true),
    ("ghu_", 30, alnum, true),
    ("ghs_", 30, alnum, true),
    ("ghr_", 30, alnum, true),
    ("github_pat_", 22, alnum_underscore, true),
    // GitLab personal, deploy and runner tokens.
    ("glpat-", 20, is_token_byte, true),
    ("gldt-", 20, is_token_byte, true),
    ("glrt-", 20, is_token_byte, true),
    // Slack.
    ("xoxb-", 10, is_token_byte, true),
    ("xoxp-", 10, is_token_byte, true),
    ("xoxa-", 10, is_token_byte, true),
    ("xoxr-", 10, is_token_byte, true),
    ("xoxs-", 10, is_token_byte, true),
    ("xapp-", 10, is_token_byte, true),
    // AWS access key ids.
    ("AKIA", 16, upper_digit, false),
    ("ASIA", 16, upper_digit, false),
    // Google API keys.
    ("AIza", 35, is_token_byte, false),
    // OpenAI and Anthropic (`sk-ant-...`) keys.
    ("sk-", 20, is_token_byte, false),
    // Stripe.
    ("sk_live_", 16, alnum, false),
    ("sk_test_", 16, alnum, false),
    ("rk_live_", 16, alnum, false),
    // Stripe webhook signing secrets.
    ("whsec_", 24, base64, true),
    // npm, PyPI, Hugging Face.
    ("npm_", 36, alnum, true),
    ("pypi-", 50, is_token_byte, true),
    ("hf_", 30, alnum, false),
];

fn token_formats(text: &str, spans: &mut Vec<(usize, usize)>) {
    for &(prefix, min, ok, anywhere) in FORMATS {
        for (i, _) in text.match_indices(prefix) {
            if !anywhere && !at_boundary(text, i) {
                continue;
            }
            let from = i + prefix.len();
            let len = run(text, from, ok);
            if len >= min && !text[from + len..].starts_with(|c: char| c.is_alphanumeric()) {
                spans.push((i, from + len));
            }
        }
    }
    // JSON Web Tokens: three base64url segments, the first two JSON objects (`eyJ` is `{"`). An
    // unsigned token (`alg: none`) has an empty third segment: it ends with the second dot.
    for (i, _) in text.match_indices("eyJ") {
        if !at_boundary(text, i) {
            continue;
        }
        let len = run(text, i, |b| is_token_byte(b) || b == b'.');
        let parts: Vec<&str> = text[i..i + len].split('.').collect();
        if parts.len() >= 3
            && parts[0].len() >= 10
            && parts[1].len() >= 10
            && parts[1].starts_with("eyJ")
            && (!parts[2].is_empty() || parts.len() == 3)
        {
            spans.push((i, i + len));
        }
    }
}

/// `Bearer <credential>` (and `Basic <base64>`), as in a copied `Authorization:` header line.
fn bearer(text: &str, spans: &mut Vec<(usize, usize)>) {
    for prefix in ["Bearer ", "bearer ", "Basic "] {
        for (i, _) in text.match_indices(prefix) {
            let from = i + prefix.len();
            let len = run(text, from, |b| {
                b.is_ascii_alphanumeric()
                    || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
            });
            let credential = &text[from..from + len];
            if len >= 16
                && credential.bytes().any(|b| b.is_ascii_digit())
                && credential.bytes().any(|b| b.is_ascii_alphabetic())
            {
                spans.push((from, from + len));
            }
        }
    }
}
