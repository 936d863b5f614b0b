//! Redaction at the boundary: secrets never reach a comment, which everyone who can read the
//! repository can read.
//!
//! The whole policy is here, in [`Redactor`]: values under keys that look like secrets (by
//! normalised pattern), and secrets recognised by their shape in any string (the forge token in
//! use, URL passwords, PEM private keys, common token formats; see `shapes.rs`).

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Map, Value};

use super::invisible::strip_zero_width;
use super::record::{Payload, Record};
use super::shapes::scrub;
use super::validate::FieldError;

pub use super::assign::REDACTED;

/// The key patterns redacted unless configured otherwise. A key matches when, lowercased and
/// with everything but letters and digits removed, it contains a pattern treated the same way:
/// `api-key`, `API_KEY` and `db_api_key` all match `api_key`.
pub const DEFAULT_REDACT_KEYS: [&str; 13] = [
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "session_key",
    "api_key",
    "private_key",
    "access_key",
    "credential",
    "authorization",
    "cookie",
];

/// The shortest value [`Redactor::with_secret`] scrubs, and the shortest forge token the
/// configuration takes (a Forgejo or Gitea access token has 40 characters).
pub const MIN_SECRET_CHARS: usize = 8;

/// Decides what is redacted, and does it. Build one with [`Redactor::new`] (key patterns) and
/// [`Redactor::with_secret`] (values to scrub wherever they appear).
#[derive(Clone)]
pub struct Redactor {
    /// Normalised key patterns (never empty strings).
    keys: Vec<String>,
    secrets: Vec<SecretString>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("keys", &self.keys)
            .field("secrets", &format_args!("{} hidden", self.secrets.len()))
            .finish()
    }
}

impl Default for Redactor {
    /// The default key patterns and no secret values.
    fn default() -> Redactor {
        Redactor::new(DEFAULT_REDACT_KEYS)
    }
}

/// Lowercase, letters and digits only: `AWS_SECRET-Access.Key` becomes `awssecretaccesskey`.
fn normalise(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

impl Redactor {
    /// Redacts the values of keys matching these patterns (see [`DEFAULT_REDACT_KEYS`]).
    pub fn new<I, S>(keys: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Redactor {
            keys: Vec::new(),
            secrets: Vec::new(),
        }
        .with_keys(keys)
    }

    /// Replaces the key patterns, keeping the secret values.
    pub fn with_keys<I, S>(mut self, keys: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.keys = keys
            .into_iter()
            .map(|k| normalise(k.as_ref()))
            .filter(|k| !k.is_empty())
            .collect();
        self
    }

    /// Also scrubs this value (the forge token in use) wherever it appears in any string. A
    /// value under [`MIN_SECRET_CHARS`] is not one: no forge token is that short (the
    /// configuration refuses such a token before it is used), and scrubbing a letter or two
    /// would cut every word that holds them.
    pub fn with_secret(mut self, secret: &SecretString) -> Redactor {
        if secret.expose_secret().chars().count() >= MIN_SECRET_CHARS {
            self.secrets.push(secret.clone());
        }
        self
    }

    /// Whether `text` holds one of the explicit secrets (the forge token in use), in any ASCII
    /// letter case, zero-width characters inside it or not. Shapes are not considered.
    pub fn holds_secret(&self, text: &str) -> bool {
        let folded = match strip_zero_width(text) {
            Some((clean, _)) => clean.to_ascii_lowercase(),
            None => text.to_ascii_lowercase(),
        };
        self.secrets.iter().any(|s| {
            let s = s.expose_secret();
            !s.is_empty() && folded.contains(&s.to_ascii_lowercase())
        })
    }

    /// True when values under `key` are redacted.
    pub fn key_matches(&self, key: &str) -> bool {
        let key = normalise(key);
        self.keys
            .iter()
            .any(|pattern| key.contains(pattern.as_str()))
    }

    /// Scrubs secrets from one string, replacing only the secret parts. Returns how many.
    pub fn redact_text(&self, text: &mut String) -> u64 {
        let secrets: Vec<&str> = self.secrets.iter().map(|s| s.expose_secret()).collect();
        match scrub(text, &secrets, &|key| self.key_matches(key)) {
            Some((clean, count)) => {
                *text = clean;
                count
            }
            None => 0,
        }
    }

    /// Redacts a JSON value in place: at any depth, the value of every key matching a pattern
    /// (except `null`, booleans and numbers, which hold no secret) becomes `"[REDACTED]"`, and every string
    /// (object keys included) is scrubbed. Returns how many secrets were replaced.
    pub fn redact(&self, value: &mut Value) -> u64 {
        match value {
            Value::Object(map) => self.redact_object(map),
            Value::Array(items) => items.iter_mut().map(|v| self.redact(v)).sum(),
            Value::String(text) => self.redact_text(text),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
    }

    fn redact_object(&self, map: &mut Map<String, Value>) -> u64 {
        let mut count = 0;
        for (key, value) in map.iter_mut() {
            // Secrets are text: a count under a matching key (`max_tokens: 4096`) is kept.
            let holds_secret = !matches!(value, Value::Null | Value::Bool(_) | Value::Number(_));
            if holds_secret && self.key_matches(key) {
                if value.as_str() != Some(REDACTED) {
                    *value = Value::String(REDACTED.to_string());
                    count += 1;
                }
            } else {
                count += self.redact(value);
            }
        }
        let mut renamed = Vec::new();
        for key in map.keys() {
            let mut clean = key.clone();
            let n = self.redact_text(&mut clean);
            if n > 0 {
                renamed.push((key.clone(), clean));
                count += n;
            }
        }
        let moved: Vec<(String, Value)> = renamed
            .into_iter()
            .filter_map(|(old, new)| map.remove(&old).map(|v| (new, v)))
            .collect();
        // Two keys may redact to the same text: number the later ones so no value is lost.
        for (new, v) in moved {
            let mut name = new.clone();
            let mut n = 2u64;
            while map.contains_key(&name) {
                name = format!("{new}#{n}");
                n += 1;
            }
            map.insert(name, v);
        }
        count
    }

    /// Redacts a record before it is written: its data or metrics as [`Redactor::redact`] does.
    /// A header value (agent, session, version, id, parent, context hash, phase, status, next
    /// check, next, blocker, intent, done) that holds a secret is refused,
    /// never scrubbed: a scrubbed name would no longer be the name readers look for, and
    /// `[REDACTED]` would stand for every such name. The count is added to the record's
    /// `Redacted:` header. Returns the count.
    pub fn redact_record(&self, record: &mut Record) -> Result<u64, FieldError> {
        for (field, value) in header_values(record) {
            if !matches!(field, "from" | "by") {
                self.refuse_secret(field, value)?;
            }
        }
        let count = self.redact_data(record);
        Ok(add_redacted(record, count))
    }

    /// Redacts a record that was read, before it is answered: whoever wrote it (the seed's own
    /// client redacts nothing), no secret this redactor knows reaches an answer. Its data,
    /// metrics and intent data as [`Redactor::redact`] does, and every header string by shape
    /// (a record that was read is never refused: its names are scrubbed instead). The count is
    /// added to the record's `redacted`.
    pub fn read(&self, mut record: Record) -> Record {
        self.redact_read(&mut record);
        record
    }

    /// [`Redactor::read`] in place. Returns the count.
    pub fn redact_read(&self, record: &mut Record) -> u64 {
        let headers: u64 = (header_values(record).into_iter())
            .map(|(_, value)| self.redact_text(value))
            .sum();
        let count = headers + self.redact_data(record);
        add_redacted(record, count)
    }

    /// Redacts what a record holds besides its headers: the data or metrics, an end's note and
    /// the intent's data. Returns the count.
    fn redact_data(&self, record: &mut Record) -> u64 {
        let payload = match &mut record.payload {
            Payload::Checkpoint { data, .. } => self.redact(data),
            Payload::Health { metrics, .. } => self.redact(metrics),
            Payload::End { note, .. } => note.as_mut().map_or(0, |n| self.redact_text(n)),
            Payload::Takeover { .. } => 0,
        };
        payload + (record.intent.as_mut()).map_or(0, |i| self.redact(&mut i.data))
    }

    fn refuse_secret(&self, field: &'static str, value: &str) -> Result<(), FieldError> {
        let mut copy = value.to_string();
        match self.redact_text(&mut copy) {
            0 => Ok(()),
            _ => Err(FieldError::LooksLikeSecret { field }),
        }
    }
}

/// Redacts `value` with these key patterns and no secret values; see [`Redactor::redact`].
pub fn redact(value: &mut Value, keys: &[String]) -> u64 {
    Redactor::new(keys).redact(value)
}

/// Every header value of `record`, named, in the order a write checks them.
fn header_values(record: &mut Record) -> Vec<(&'static str, &mut String)> {
    let mut out: Vec<(&'static str, &mut String)> = vec![
        ("agent", &mut record.agent),
        ("session", &mut record.session),
        ("version", &mut record.version),
    ];
    for (field, value) in [
        ("id", &mut record.id),
        ("parent", &mut record.parent),
        ("writer", &mut record.writer),
        ("context hash", &mut record.context_hash),
        ("next", &mut record.next),
    ] {
        out.extend(value.as_mut().map(|v| (field, v)));
    }
    out.extend(record.blockers.iter_mut().map(|b| ("blocker", b)));
    match &mut record.payload {
        Payload::Checkpoint { phase, .. } => out.push(("phase", phase)),
        Payload::Health {
            status, next_check, ..
        } => {
            out.push(("status", status));
            out.extend(next_check.as_mut().map(|n| ("next check", n)));
        }
        Payload::End { reason, .. } => out.push(("reason", reason)),
        Payload::Takeover { from, by } => {
            out.extend(from.iter_mut().map(|v| ("from", v)));
            out.extend(by.iter_mut().map(|v| ("by", v)));
        }
    }
    out.extend(record.intent.as_mut().map(|i| ("intent", &mut i.name)));
    out.extend(record.done.as_mut().map(|d| ("done", d)));
    out
}

/// Adds `count` to the record's `Redacted:` count, when there is any. Returns `count`.
fn add_redacted(record: &mut Record, count: u64) -> u64 {
    if count > 0 {
        record.redacted = Some(record.redacted.unwrap_or(0).saturating_add(count));
    }
    count
}
