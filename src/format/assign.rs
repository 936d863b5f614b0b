//! Secrets found as the value of a `NAME=value` assignment inside a string, where the name looks
//! like a secret's: `export AWS_SECRET_ACCESS_KEY=…`, `--password=…`, `?user=a&password=…&x=1`.
//! Pure string work; the key patterns are the redactor's (`redact.rs`), handed in.

/// What replaces a redacted value.
pub const REDACTED: &str = "[REDACTED]";

/// A byte that may be part of an assigned name (`AWS_SECRET_ACCESS_KEY`, `--db.password`).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Where the name that ends at `end` starts: after the last byte before it that
/// [`is_name_byte`] refuses.
fn name_start(bytes: &[u8], end: usize) -> usize {
    bytes[..end]
        .iter()
        .rposition(|&b| !is_name_byte(b))
        .map_or(0, |p| p + 1)
}

/// A byte that ends an unquoted value: white space, a query string's `&`, a list's `;` or `,`,
/// a quote, a closing bracket.
fn ends_value(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'&' | b';' | b',' | b'"' | b'\'' | b'`' | b')' | b']' | b'}' | b'<' | b'>'
        )
}

/// Pushes the span of every value assigned to a name `secret_key` accepts. A value that is a
/// number, `true`/`false` or `null` is kept (`max_tokens=4096` is no secret), as are empty values and
/// values already redacted. `==`, `!=`, `<=` and `>=` are comparisons, not assignments.
pub(crate) fn assignments(
    text: &str,
    secret_key: &dyn Fn(&str) -> bool,
    spans: &mut Vec<(usize, usize)>,
) {
    let bytes = text.as_bytes();
    for (eq, _) in text.match_indices('=') {
        if bytes.get(eq + 1) == Some(&b'=') {
            continue;
        }
        let name_start = name_start(bytes, eq);
        if name_start == eq || (name_start > 0 && matches!(bytes[name_start - 1], b'!' | b'<')) {
            continue;
        }
        if !secret_key(&text[name_start..eq]) {
            continue;
        }
        // Quoted, escaped-quoted (JSON inside a JSON string) or bare, as after a colon.
        spans.extend(value_at(text, eq + 1));
    }
}

/// The span of the value that starts at `from` (after a separator and any blanks): quoted up
/// to its closing quote, else up to [`ends_value`]. `None` for a value that holds no secret: a
/// number, `true`/`false`/`null`, empty, or already redacted.
fn value_at(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let (start, end) = match bytes.get(from) {
        // A JSON document inside a JSON string: `{\"password\": \"x\"}`. The value ends at the
        // next escaped quote; cutting at the backslash would break the outer string.
        Some(b'\\') if bytes.get(from + 1) == Some(&b'"') => {
            let start = from + 2;
            let len = text[start..].find("\\\"").unwrap_or(bytes.len() - start);
            (start, start + len)
        }
        Some(b'\\') => return None,
        Some(&q @ (b'"' | b'\'')) => {
            let start = from + 1;
            let len = bytes[start..]
                .iter()
                .position(|&b| b == q)
                .unwrap_or(bytes.len() - start);
            (start, start + len)
        }
        _ => {
            let len = bytes[from..]
                .iter()
                .position(|&b| ends_value(b))
                .unwrap_or(bytes.len() - from);
            (from, from + len)
        }
    };
    let value = &text[start..end];
    let plain = value.parse::<f64>().is_ok() || matches!(value, "true" | "false" | "null");
    (!(value.is_empty() || plain || text[start..].starts_with(REDACTED))).then_some((start, end))
}

/// Pushes the span of every value given to a secret-looking name with a colon, as JSON, YAML
/// and `env`-style dumps write it: `password: hunter2`, `"db_password": "x"`,
/// `AWS_SECRET_ACCESS_KEY: …`. (`https://u:pw@host` is the URL rule's: its name is `https`.)
pub(crate) fn colon_assignments(
    text: &str,
    secret_key: &dyn Fn(&str) -> bool,
    spans: &mut Vec<(usize, usize)>,
) {
    let bytes = text.as_bytes();
    for (colon, _) in text.match_indices(':') {
        let (name_start, name_end) = match colon.checked_sub(1).map(|i| bytes[i]) {
            Some(q @ (b'"' | b'\'')) => {
                let end = colon - 1;
                match bytes[..end].iter().rposition(|&b| b == q) {
                    Some(open) => (open + 1, end),
                    None => continue,
                }
            }
            _ => (name_start(bytes, colon), colon),
        };
        if name_start == name_end || !secret_key(&text[name_start..name_end]) {
            continue;
        }
        let from = colon
            + 1
            + bytes[colon + 1..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
        if from == colon + 1 && bytes.get(from).is_some_and(|&b| b != b'"' && b != b'\'') {
            // `name:value` with no blank: a URL's `user:password@` or a `host:port`, not a field.
            continue;
        }
        let Some((start, end)) = value_at(text, from) else {
            continue;
        };
        // `Authorization: token X`, `Authorization: Bearer X`: the scheme stays, X is the secret.
        let scheme = ["token", "bearer", "basic", "digest"]
            .contains(&text[start..end].to_ascii_lowercase().as_str());
        match scheme && bytes.get(end) == Some(&b' ') {
            true => spans.extend(value_at(text, end + 1)),
            false => spans.push((start, end)),
        }
    }
}

/// Pushes the span of the value after a secret-looking long flag and one space, as a command
/// line writes it: `--password hunter2`, `--api-key "k"`. A flag naming where the secret is
/// (`--token-file PATH`, `--password-env VAR`) keeps its value, as does a next flag.
pub(crate) fn flag_values(
    text: &str,
    secret_key: &dyn Fn(&str) -> bool,
    spans: &mut Vec<(usize, usize)>,
) {
    let bytes = text.as_bytes();
    for (dash, _) in text.match_indices("--") {
        if dash > 0 && !bytes[dash - 1].is_ascii_whitespace() {
            continue;
        }
        let name_start = dash + 2;
        let len = bytes[name_start..]
            .iter()
            .take_while(|&&b| is_name_byte(b))
            .count();
        let name = &text[name_start..name_start + len];
        let lower = name.to_ascii_lowercase();
        let names_a_place = [
            "file", "path", "dir", "env", "name", "stdin", "cmd", "command",
        ]
        .iter()
        .any(|s| lower.ends_with(s));
        if len == 0 || names_a_place || !secret_key(name) {
            continue;
        }
        let from = name_start + len;
        if bytes.get(from) != Some(&b' ') || bytes.get(from + 1) == Some(&b'-') {
            continue;
        }
        spans.extend(value_at(text, from + 1));
    }
}
