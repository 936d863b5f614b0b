//! The record format: `[CHECKPOINT]`, `[HEALTH]`, `[END]` and `[TAKEOVER]` comment bodies,
//! rendered and parsed.
//!
//! This module is pure. It does no IO: it turns [`Record`]s into markdown strings and strings back
//! into records (or a [`ParseError`] naming the reason). Stores move the strings; the client glues
//! the two together. Compatibility with the seed document's Python agents is a hard contract in
//! both directions; see `tests/it/interop/seed_parser.rs`.

mod assign;
mod gate;
mod glob;
mod identity;
mod invisible;
mod names;
mod parse;
mod record;
mod redact;
mod render;
mod session;
mod shapes;
mod sign;
mod takeover;
mod time;
mod validate;

pub use gate::{GateError, outbound};
pub use glob::{glob_matches, key_matches};
pub use identity::Identity;
pub use names::{LookAlike, nfc};
pub use parse::{ParseError, marker_in_head, marker_line, parse, parse_keeping_data};
pub(crate) use record::ser_time;
pub use record::{
    BuildError, Kind, Payload, Record, SEED_VERSION, WRITE_VERSION, context_hash, empty_object,
    is_record_id, new_record_id,
};
pub use redact::{DEFAULT_REDACT_KEYS, MIN_SECRET_CHARS, REDACTED, Redactor, redact};
pub use render::{RenderError, Renderer, SessionIssue, TEMPLATE_NAMES, Templates};
pub use session::{END_REASONS, Intent};
pub(crate) use sign::salted_fingerprint;
pub use sign::{
    SIGNATURE_ALGORITHM, SIGNATURE_HEADER, SigningKey, Verdict, canonical, sign, verify,
};
pub use time::{format_time, now_micros, parse_time};
pub use validate::{
    DEFAULT_MAX_BODY_BYTES, FieldError, GLOB_CHARS, HARD_MAX_BODY_BYTES, MAX_FIELD_CHARS,
    check_body_cap, check_field, check_name, check_new_name, is_invisible, spoofing_char,
};
