//! Write-side checks: what may go into a header line, and how big a body may be.
//!
//! Header values are interpolated into single lines of a markdown comment, so anything that could
//! end the line or restructure the markdown would let a caller forge other header lines (a session
//! id of `x\nPhase: evil`). We refuse such values instead of escaping them: the seed's Python
//! parser, which must keep reading what we write, knows no escapes.

use thiserror::Error;

/// Longest agent, session or phase we accept, in characters.
pub const MAX_FIELD_CHARS: usize = 200;
/// Default cap on a rendered comment body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;
/// The cap no configuration can raise: forges sit behind proxies that refuse 1 MiB requests.
pub const HARD_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Why a header value was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FieldError {
    #[error("{field} is empty; give a non-empty {field}")]
    Empty { field: &'static str },
    #[error("{field} is {chars} characters long; the limit is {MAX_FIELD_CHARS}")]
    TooLong { field: &'static str, chars: usize },
    #[error(
        "{field} contains a line break or control character (U+{code:04X}) at character {index}; \
         header values must be a single line of printable text"
    )]
    ControlChar {
        field: &'static str,
        code: u32,
        index: usize,
    },
    #[error("{field} starts or ends with whitespace; readers trim it, so it would not round-trip")]
    EdgeWhitespace { field: &'static str },
    #[error("{field} contains ``` which would open a code fence in the comment")]
    Fence { field: &'static str },
}

/// Checks one header value (agent, session, phase, status, next check).
pub fn check_field(field: &'static str, value: &str) -> Result<(), FieldError> {
    if value.is_empty() {
        return Err(FieldError::Empty { field });
    }
    let chars = value.chars().count();
    if chars > MAX_FIELD_CHARS {
        return Err(FieldError::TooLong { field, chars });
    }
    for (index, c) in value.chars().enumerate() {
        // U+2028/U+2029 are line breaks to many renderers even though they are not controls.
        if c.is_control() || c == '\u{2028}' || c == '\u{2029}' || c == '\u{feff}' {
            return Err(FieldError::ControlChar {
                field,
                code: c as u32,
                index,
            });
        }
    }
    if value.starts_with(char::is_whitespace) || value.ends_with(char::is_whitespace) {
        return Err(FieldError::EdgeWhitespace { field });
    }
    if value.contains("```") {
        return Err(FieldError::Fence { field });
    }
    Ok(())
}

/// Checks a configured body cap against the hard cap.
pub fn check_body_cap(max_body_bytes: usize) -> Result<usize, String> {
    if max_body_bytes == 0 || max_body_bytes > HARD_MAX_BODY_BYTES {
        return Err(format!(
            "max_body_bytes is {max_body_bytes}; it must be between 1 and {HARD_MAX_BODY_BYTES} (1 MiB)"
        ));
    }
    Ok(max_body_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_header_injection() {
        let err = check_field("session", "x\nPhase: evil").unwrap_err();
        assert_eq!(
            err,
            FieldError::ControlChar {
                field: "session",
                code: 10,
                index: 1
            }
        );
        assert!(check_field("session", "x\r").is_err());
        assert!(check_field("session", "x\u{2028}y").is_err());
    }

    #[test]
    fn refuses_empty_long_padded_and_fenced() {
        assert!(matches!(
            check_field("agent", ""),
            Err(FieldError::Empty { .. })
        ));
        let long = "a".repeat(MAX_FIELD_CHARS + 1);
        assert!(matches!(
            check_field("agent", &long),
            Err(FieldError::TooLong { chars: 201, .. })
        ));
        assert!(check_field("agent", &"é".repeat(MAX_FIELD_CHARS)).is_ok());
        assert!(matches!(
            check_field("phase", " a"),
            Err(FieldError::EdgeWhitespace { .. })
        ));
        assert!(matches!(
            check_field("phase", "a```json"),
            Err(FieldError::Fence { .. })
        ));
        assert!(check_field("phase", "subtask_3_complete: ok [x]").is_ok());
    }

    #[test]
    fn body_cap_is_bounded() {
        assert!(check_body_cap(HARD_MAX_BODY_BYTES).is_ok());
        assert!(check_body_cap(HARD_MAX_BODY_BYTES + 1).is_err());
        assert!(check_body_cap(0).is_err());
    }
}
