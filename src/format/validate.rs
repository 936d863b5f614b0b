//! Write-side checks: what may go into a header line, and how big a body may be.
//!
//! Header values are interpolated into single lines of a markdown comment, so anything that could
//! end the line or restructure the markdown would let a caller forge other header lines (a session
//! id of `x\nPhase: evil`). We refuse such values instead of escaping them: the seed's Python
//! parser, which must keep reading what we write, knows no escapes.

use thiserror::Error;

use super::invisible;
use super::names::{LookAlike, look_alike};

/// Longest agent, session or phase we accept, in characters.
pub const MAX_FIELD_CHARS: usize = 200;
/// Default cap on a rendered comment body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;
/// The cap no configuration can raise: forges sit behind proxies that refuse 1 MiB requests.
pub const HARD_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Why a header value was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FieldError {
    /// A health record's header value holds the checkpoint marker, which seed 003's reader
    /// takes anywhere in a body for a checkpoint.
    #[error(
        "{field} contains \"[CHECKPOINT]\", which seed 003's reader would take for a checkpoint; \
         write it another way (say, CHECKPOINT without the brackets)"
    )]
    Marker {
        /// The field (`status`, `next check`).
        field: &'static str,
    },
    /// The value is empty.
    #[error("{field} is empty; give a non-empty {field}")]
    Empty {
        /// The field (`agent`, `session`, ...).
        field: &'static str,
    },
    /// The value is over the length limit.
    #[error("{field} is {chars} characters long; the limit is {MAX_FIELD_CHARS}")]
    TooLong {
        /// The field (`agent`, `session`, ...).
        field: &'static str,
        /// Its length, in characters.
        chars: usize,
    },
    /// The value holds a line break or control character.
    #[error(
        "{field} contains a line break or control character (U+{code:04X}) at character {at}; \
         header values must be a single line of printable text",
        at = .index + 1
    )]
    ControlChar {
        /// The field (`agent`, `session`, ...).
        field: &'static str,
        /// The character's code point.
        code: u32,
        /// Its position, in characters (0-based).
        index: usize,
    },
    /// The value starts or ends with whitespace.
    #[error("{field} starts or ends with whitespace; readers trim it, so it would not round-trip")]
    EdgeWhitespace {
        /// The field (`agent`, `session`, ...).
        field: &'static str,
    },
    /// The value holds a code fence.
    #[error("{field} contains ``` which would open a code fence in the comment")]
    Fence {
        /// The field (`agent`, `session`, ...).
        field: &'static str,
    },
    /// The value holds an invisible or reordering character.
    #[error(
        "{field} contains U+{code:04X} ({name}) at character {at}, which is invisible, \
         renders blank or reorders text, so one name could pass for another in the forge's UI; \
         remove it (only the plain space U+0020 may separate words)",
        at = .index + 1
    )]
    Spoofing {
        /// The field (`agent`, `session`, ...).
        field: &'static str,
        /// The character's code point.
        code: u32,
        /// The character's name.
        name: &'static str,
        /// Its position, in characters (0-based).
        index: usize,
    },
    /// An agent or session name holds a glob metacharacter.
    #[error(
        "{field} contains {found:?} at character {at}, a glob metacharacter (* ? [ ] {{ }}); \
         agent and session names must be plain so that filters and resume match them exactly; \
         remove it",
        at = .index + 1
    )]
    GlobChar {
        /// The field (`agent`, `session`).
        field: &'static str,
        /// The metacharacter.
        found: char,
        /// Its position, in characters (0-based).
        index: usize,
    },
    /// A new agent or session name could pass for another name (`found` says how).
    #[error("{field} {found}")]
    LookAlike {
        /// The field (`agent`, `session`).
        field: &'static str,
        /// How it could pass for another name.
        found: LookAlike,
    },
    /// The value would be changed by the redactor: it is, or holds, something shaped like a secret.
    #[error(
        "{field} looks like a secret (it holds a token, key or password the redactor would \
         replace); header values are never scrubbed, so give a {field} that is not secret"
    )]
    LooksLikeSecret {
        /// The field (`agent`, `session`, `phase`, ...).
        field: &'static str,
    },
}

/// The characters that make a filter value a glob: a name written with one could be matched
/// by a filter meant for another.
pub const GLOB_CHARS: [char; 6] = ['*', '?', '[', ']', '{', '}'];

/// Checks an agent or session name: [`check_field`], and no glob metacharacter
/// ([`GLOB_CHARS`]). Only writes check this; readers take any name a record holds.
pub fn check_name(field: &'static str, value: &str) -> Result<(), FieldError> {
    check_field(field, value)?;
    match value
        .chars()
        .enumerate()
        .find(|(_, c)| GLOB_CHARS.contains(c))
    {
        Some((index, found)) => Err(FieldError::GlobChar {
            field,
            found,
            index,
        }),
        None => Ok(()),
    }
}

/// Checks the name of a new record (already in NFC, `names::nfc`): [`check_name`], and no
/// mix of look-alike scripts or stack of combining marks. Records written elsewhere are read,
/// and carried on rotation, whatever their names; only new names are held to this.
pub fn check_new_name(field: &'static str, value: &str) -> Result<(), FieldError> {
    check_name(field, value)?;
    match look_alike(value) {
        None => Ok(()),
        Some(found) => Err(FieldError::LookAlike { field, found }),
    }
}

/// The first bidirectional control, invisible or blank-rendering character in `value` (see
/// `invisible.rs`: white space other than the plain space, default-ignorable code points, format
/// controls, the braille blank and the like), if any. Writes refuse
/// such header values; readers may use this to flag records that were written elsewhere.
pub fn spoofing_char(value: &str) -> Option<char> {
    value.chars().find(|&c| invisible::kind(c).is_some())
}

/// Whether `c` renders as nothing or a blank, or reorders the text around it (the characters
/// [`spoofing_char`] finds): what a terminal must not be handed raw from a record written
/// elsewhere.
pub fn is_invisible(c: char) -> bool {
    invisible::kind(c).is_some()
}

/// [`check_field`], and no checkpoint marker: for the header values of a record that is not a
/// checkpoint (a health signal's status and next check).
pub fn check_unmarked(field: &'static str, value: &str) -> Result<(), FieldError> {
    check_field(field, value)?;
    match value.contains("[CHECKPOINT]") {
        true => Err(FieldError::Marker { field }),
        false => Ok(()),
    }
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
        if let Some(name) = invisible::kind(c) {
            return Err(FieldError::Spoofing {
                field,
                code: c as u32,
                name,
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
