//! Rendering records (and the session issue's body) to markdown through minijinja templates.
//!
//! The templates live in `templates/` and are compiled into the binary; a configuration may
//! replace any of them. Whatever the template, [`Renderer::render`] parses its own output back and
//! refuses a body that would not read back as the same record: a template edit must never produce
//! checkpoints that resume cannot see.

use chrono::SubsecRound;
use minijinja::{Environment, UndefinedBehavior, context};
use serde_json::Value;
use thiserror::Error;

use super::parse::parse;
use super::record::{BuildError, Payload, Record};
use super::time::format_time;
use super::validate::HARD_MAX_BODY_BYTES;

/// Template names, which are also the file names in `templates/` and in an override directory.
pub const TEMPLATE_NAMES: [&str; 5] = [
    "checkpoint.md",
    "health.md",
    "session-issue.md",
    "end.md",
    "takeover.md",
];

/// The source of each template, in the order of [`TEMPLATE_NAMES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Templates([String; 5]);

impl Templates {
    /// The templates shipped in `templates/`.
    pub fn embedded() -> Templates {
        Templates(
            [
                include_str!("../../templates/checkpoint.md"),
                include_str!("../../templates/health.md"),
                include_str!("../../templates/session-issue.md"),
                include_str!("../../templates/end.md"),
                include_str!("../../templates/takeover.md"),
            ]
            .map(str::to_string),
        )
    }

    /// Replaces the template called `name` (one of [`TEMPLATE_NAMES`]). Returns false for an
    /// unknown name.
    pub fn replace(&mut self, name: &str, source: String) -> bool {
        match TEMPLATE_NAMES.iter().position(|n| *n == name) {
            Some(at) => self.0[at] = source,
            None => return false,
        }
        true
    }
}

/// Why a body could not be rendered.
#[derive(Debug, Error)]
pub enum RenderError {
    /// The record itself was refused.
    #[error(transparent)]
    Invalid(#[from] BuildError),
    /// A template failed to render.
    #[error("template {name}: {source}")]
    Template {
        /// The template's name.
        name: &'static str,
        /// The template engine's error.
        source: minijinja::Error,
    },
    /// The rendered body is over the body cap.
    #[error(
        "the comment is {len} bytes as sent (JSON-escaped), over the {cap}-byte limit; \
         store less state (file paths, not file contents) or raise max_body_bytes (hard cap 1 MiB)"
    )]
    TooLarge {
        /// The body's length as sent, in bytes.
        len: usize,
        /// The cap, in bytes.
        cap: usize,
    },
    /// A template override produced a body that does not parse back as the record.
    #[error(
        "template {name} produced a body that does not read back as the same record ({reason}); \
         fix the template override"
    )]
    NotReadable {
        /// The template's name.
        name: &'static str,
        /// Why it does not read back.
        reason: String,
    },
}

/// What the session issue's body talks about.
#[derive(Debug, Clone, Default)]
pub struct SessionIssue {
    /// The repository owner.
    pub owner: String,
    /// The repository name.
    pub repo: String,
    /// Comma-separated trusted author logins, shown to humans; may be empty.
    pub trusted: String,
}

/// Renders records and the session issue with a fixed set of templates and a body-size cap.
#[derive(Clone)]
pub struct Renderer {
    env: Environment<'static>,
    max_body_bytes: usize,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

impl Renderer {
    /// Compiles the templates. `max_body_bytes` is clamped to the 1 MiB hard cap.
    pub fn new(templates: Templates, max_body_bytes: usize) -> Result<Renderer, RenderError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        for (name, source) in TEMPLATE_NAMES.into_iter().zip(templates.0) {
            env.add_template_owned(name, source)
                .map_err(|source| RenderError::Template { name, source })?;
        }
        Ok(Renderer {
            env,
            max_body_bytes: max_body_bytes.min(HARD_MAX_BODY_BYTES),
        })
    }

    /// Renders with the embedded templates and the default cap.
    pub fn embedded() -> Result<Renderer, RenderError> {
        Renderer::new(
            Templates::embedded(),
            super::validate::DEFAULT_MAX_BODY_BYTES,
        )
    }

    /// The largest body this renderer writes, in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// Renders a record's comment body, after validating it, and checks it reads back unchanged.
    pub fn render(&self, record: &Record) -> Result<String, RenderError> {
        record.check()?;
        // What every kind's template sees; checkpoints and health records add their handoff.
        let common = context! {
            agent => &record.agent, version => &record.version,
            session => &record.session, time => format_time(&record.time),
            id => &record.id, seq => record.seq, parent => &record.parent,
            writer => &record.writer,
            redacted => record.redacted, carried_from => record.carried_from,
            posted_at => record.posted_at.as_ref().map(format_time),
            edited_at => record.edited_at.as_ref().map(format_time),
        };
        let handoff = context! {
            next => &record.next, blockers => &record.blockers,
            context_hash => &record.context_hash, ..common.clone()
        };
        let (name, body) = match &record.payload {
            Payload::Checkpoint { phase, data } => {
                let ctx = context! {
                    phase => phase, data_json => pretty(data),
                    intent => record.intent.as_ref().map(|i| &i.name), done => &record.done,
                    intent_json => record.intent.as_ref().filter(|i| !i.data.is_null()).map(|i| pretty(&i.data)),
                    ..handoff
                };
                ("checkpoint.md", self.run("checkpoint.md", ctx)?)
            }
            Payload::Health {
                status,
                metrics,
                next_check,
            } => {
                let ctx = context! {
                    status => status, metrics_json => unmarked(pretty(metrics)),
                    next_check => next_check, ..handoff
                };
                ("health.md", self.run("health.md", ctx)?)
            }
            Payload::End { reason, note } => {
                let ctx = context! {
                    reason => reason, details_json => end_details(note.as_deref()), ..common
                };
                ("end.md", self.run("end.md", ctx)?)
            }
            Payload::Takeover { from, by } => {
                let ctx = context! {
                    from => from, by => by,
                    details_json => takeover_details(record.writer.as_deref(), from.as_deref()),
                    ..common
                };
                ("takeover.md", self.run("takeover.md", ctx)?)
            }
        };
        // The cap holds for the request the server receives, `{"body": "..."}`, where JSON
        // escaping can make the body several times larger (quotes, backslashes, newlines).
        let len = request_len(&body);
        if len > self.max_body_bytes {
            return Err(RenderError::TooLarge {
                len,
                cap: self.max_body_bytes,
            });
        }
        // Records carry microseconds; compare against what the body can express.
        let mut expected = record.clone();
        expected.time = record.time.trunc_subsecs(6);
        match parse(&body) {
            Ok(back) if back == expected => Ok(body),
            Ok(_) => Err(RenderError::NotReadable {
                name,
                reason: "fields differ".to_string(),
            }),
            Err(e) => Err(RenderError::NotReadable {
                name,
                reason: e.to_string(),
            }),
        }
    }

    /// Renders the body of the session issue.
    pub fn session_issue(&self, issue: &SessionIssue) -> Result<String, RenderError> {
        let ctx = context! {
            owner => &issue.owner, repo => &issue.repo, trusted => &issue.trusted,
            version => env!("CARGO_PKG_VERSION"),
        };
        self.run("session-issue.md", ctx)
    }

    fn run(&self, name: &'static str, ctx: minijinja::Value) -> Result<String, RenderError> {
        let template = |source| RenderError::Template { name, source };
        self.env
            .get_template(name)
            .map_err(template)?
            .render(ctx)
            .map_err(template)
    }
}

/// The seed's `json.dumps(data, indent=2, sort_keys=True)`: two-space indent, keys sorted at
/// every level (by code point, as Python sorts them).
fn pretty(value: &Value) -> String {
    let mut sorted = value.clone();
    sorted.sort_all_objects();
    // Serializing a `Value` cannot fail: its map keys are strings.
    serde_json::to_string_pretty(&sorted).unwrap_or_default()
}

/// The end record's `Details:` block: `{"note": ...}`. A note that quotes `[CHECKPOINT]` is
/// written with its `[` escaped (`\u005b`), which JSON reads back the same: seed 003's reader takes
/// any body holding that marker for a checkpoint.
fn end_details(note: Option<&str>) -> String {
    let details = match note {
        Some(note) => serde_json::json!({ "note": note }),
        None => serde_json::json!({}),
    };
    unmarked(pretty(&details))
}

/// The takeover record's block: `{"from": ..., "owner": ...}`, for a person reading the
/// comment (readers take both from the header lines).
fn takeover_details(owner: Option<&str>, from: Option<&str>) -> String {
    unmarked(pretty(&serde_json::json!({ "owner": owner, "from": from })))
}

/// A JSON block of a record that is not a checkpoint, with every `[CHECKPOINT]` in its strings
/// written `\u005bCHECKPOINT]` (JSON reads it back the same): seed 003's reader takes any body
/// holding the marker for a checkpoint.
fn unmarked(json: String) -> String {
    json.replace("[CHECKPOINT]", "\\u005bCHECKPOINT]")
}

/// The size of the JSON request that carries `body` (`{"body":"..."}`), escaping included.
pub fn request_len(body: &str) -> usize {
    const ENVELOPE: usize = r#"{"body":""}"#.len();
    let escaped: usize = body
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum();
    ENVELOPE + escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_len_is_the_serialized_request_size() {
        for body in [
            "plain",
            "q\"uo\\te",
            "a\nb\r\tc\u{1}\u{1f}\u{8}",
            "ünï\u{7f}",
            "",
        ] {
            let sent = serde_json::to_string(&serde_json::json!({ "body": body })).unwrap();
            assert_eq!(request_len(body), sent.len(), "{body:?}");
        }
    }
}
