//! The values of single header lines: the version's major number, whole numbers, the issue a
//! record was carried from, the time it was first posted; and short error excerpts.

use chrono::{DateTime, Utc};

use super::super::time::parse_time;
use super::ParseError;

/// An optional header line named `field`, read by `read`; a value it refuses is a bad field,
/// for the reason it gives.
fn header<T>(
    value: Option<String>,
    field: &'static str,
    read: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<T>, ParseError> {
    value
        .map(|v| {
            read(&v).map_err(|reason| ParseError::BadField {
                field,
                value: clip(&v),
                reason,
            })
        })
        .transpose()
}

/// An optional time header (RFC 3339) of a carried record: `Posted-At:` (when it was first
/// posted) or `Edited-At:` (when the comment it was carried from had been edited), named `field`.
pub(super) fn time_header(
    value: Option<String>,
    field: &'static str,
) -> Result<Option<DateTime<Utc>>, ParseError> {
    header(value, field, parse_time)
}

/// Accepts `1`, `1.0`, `2.0`, `3.1.4`…; returns the major number. Future majors are read
/// best-effort; anything that is not a version number is refused.
pub(super) fn version_major(version: &str) -> Result<u64, ParseError> {
    let mut parts = 0;
    let numeric = version.split('.').all(|p| {
        parts += 1;
        parts <= 3 && !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit())
    });
    let major = version
        .split('.')
        .next()
        .and_then(|p| p.parse::<u64>().ok());
    match major {
        Some(m) if numeric && m >= 1 => Ok(m),
        _ => Err(ParseError::UnsupportedVersion(clip(version))),
    }
}

/// An optional header holding a whole number.
pub(super) fn whole_number(
    value: Option<String>,
    field: &'static str,
) -> Result<Option<u64>, ParseError> {
    header(value, field, |v| {
        v.parse().map_err(|_| "expected a whole number".to_string())
    })
}

/// The optional `Carried-From: #12` header: the issue number a rotation carried the record from.
pub(super) fn carried_from(value: Option<String>) -> Result<Option<u64>, ParseError> {
    header(value, "carried-from", |v| {
        (v.strip_prefix('#').and_then(|n| n.parse().ok()))
            .ok_or_else(|| "expected an issue number such as #12".to_string())
    })
}

/// Keeps error messages short when a header value is huge.
pub(super) fn clip(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The major version is read as splitting the text at its dots (into at most three runs of
    /// one to nine digits) says: the same numbers and refusals.
    #[test]
    fn the_major_version_is_what_the_dotted_parts_say() {
        let reference = |version: &str| {
            let parts: Vec<&str> = version.split('.').collect();
            let numeric = parts.len() <= 3
                && parts.iter().all(|p| {
                    !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit())
                });
            match parts.first().and_then(|p| p.parse::<u64>().ok()) {
                Some(m) if numeric && m >= 1 => Ok(m),
                _ => Err(ParseError::UnsupportedVersion(clip(version))),
            }
        };
        for version in [
            "1",
            "1.0",
            "2.0",
            "3.1.4",
            "3.1.4.1",
            "0",
            "0.1",
            "01.0",
            "1.",
            ".1",
            "",
            "1..0",
            "123456789",
            "1234567890",
            "1.1234567890",
            "+1",
            "1.a",
            "٣.0",
            "2.0 ",
            "10.20.30",
        ] {
            assert_eq!(version_major(version), reference(version), "{version:?}");
        }
        assert_eq!(version_major("3.1.4"), Ok(3));
    }
}
