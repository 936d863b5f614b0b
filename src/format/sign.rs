//! Record signatures: one `Signature:` header line, HMAC-SHA256 over the body's canonical
//! content, with a key id so keys can rotate. Pure: strings and keys in, lines and verdicts out.
//!
//! **Why HMAC-SHA256, not Ed25519.** The writers and the readers are the same team's agents,
//! which already share a secret (the forge token); what a signature must stop is a person with
//! write access to the repository (or someone who got the token) changing or forging a record.
//! A shared signing key, held apart from the token, does that. HMAC needs only `sha2`, which the
//! crate already depends on (RFC 2104 is a dozen lines, tested against RFC 4231's vectors
//! below); Ed25519 would add a curve library and key-pair handling for a property (readers who
//! cannot sign) no reader here needs. The cost: anyone who can verify can also sign, so the key
//! must be kept like the token.
//!
//! **Canonical content**: the body with CRLF as LF, trailing whitespace dropped from the end,
//! and every `Signature:` line of the header block (the lines before the first blank one)
//! removed. It covers the marker, every header line (agent, session, phase, `Id`, `Parent`,
//! `Posted-At`...), the JSON block and the footer: any edit of any of them breaks it.
//!
//! The line is `Signature: hmac-sha256 <key id> <64 hex>`, the last header line. Seed 003's
//! reader only looks at the lines it knows (`Version:`, `Phase:`...) and the JSON fence, so it
//! reads signed records as before.

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};

/// The header a signature is written under.
pub const SIGNATURE_HEADER: &str = "Signature";
/// The one algorithm signatures use.
pub const SIGNATURE_ALGORITHM: &str = "hmac-sha256";

/// A signing key: its secret and the id derived from it (the first 8 hex digits of a SHA-256
/// of a fixed prefix and the secret, so the id names the key without revealing it).
#[derive(Clone)]
pub struct SigningKey {
    id: String,
    secret: SecretString,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({})", self.id)
    }
}

impl SigningKey {
    /// The key's length in bytes (after trimming white space).
    pub fn len(&self) -> usize {
        use secrecy::ExposeSecret;
        self.secret.expose_secret().len()
    }

    /// Whether the key is empty (never: [`SigningKey::new`] refuses an empty key).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A key from its secret text (leading and trailing whitespace dropped, as a key file's
    /// final newline). `None` for an empty secret.
    pub fn new(secret: &str) -> Option<SigningKey> {
        let secret = secret.trim();
        if secret.is_empty() {
            return None;
        }
        let mut h = Sha256::new();
        h.update(b"forgestate signing key id\0");
        h.update(secret.as_bytes());
        let id = hex(&h.finalize()[..4]);
        Some(SigningKey {
            id,
            secret: SecretString::from(secret.to_string()),
        })
    }

    /// The secret, for the redactor (a record never carries the key).
    pub fn secret(&self) -> &SecretString {
        &self.secret
    }

    /// The key's id, as signatures name it.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn mac(&self, content: &str) -> String {
        hex(&hmac_sha256(
            self.secret.expose_secret().as_bytes(),
            content.as_bytes(),
        ))
    }
}

/// What a body's signature says, checked against the keys a reader holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Signed by the key with this id, and the content is what was signed.
    Valid {
        /// The key's id.
        key_id: String,
    },
    /// No signature line.
    Missing,
    /// A signature line that is not `hmac-sha256 <key id> <64 hex>`.
    Malformed,
    /// Signed with a key this reader does not hold.
    UnknownKey {
        /// The id the line names.
        key_id: String,
    },
    /// The signature does not match the content: it was changed after signing (or forged).
    Wrong {
        /// The key's id.
        key_id: String,
    },
}

impl Verdict {
    /// Why a record with this verdict is not believed (`None` when it is).
    pub fn problem(&self) -> Option<String> {
        match self {
            Verdict::Valid { .. } => None,
            Verdict::Missing => Some("it carries no signature".into()),
            Verdict::Malformed => Some("its signature line is malformed".into()),
            Verdict::UnknownKey { key_id } => Some(format!(
                "it is signed with key {key_id}, which this reader does not hold (add the key \
                 to the verification keys if it is one of yours)"
            )),
            Verdict::Wrong { key_id } => Some(format!(
                "its signature (key {key_id}) does not match its content: it was changed after \
                 signing, or forged"
            )),
        }
    }
}

/// `body` with a signature line by `key` as its last header line. A signature line already in
/// the body is replaced.
pub fn sign(body: &str, key: &SigningKey) -> String {
    let content = canonical(body);
    let line = format!(
        "{SIGNATURE_HEADER}: {SIGNATURE_ALGORITHM} {} {}",
        key.id,
        key.mac(&content)
    );
    let mut lines: Vec<&str> = content.split('\n').collect();
    let end = header_end(&lines);
    lines.insert(end, &line);
    let mut out = lines.join("\n");
    if body.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Checks `body`'s signature against `keys` (any of them may have signed it).
pub fn verify(body: &str, keys: &[SigningKey]) -> Verdict {
    let Some(value) = signature_value(body) else {
        return Verdict::Missing;
    };
    let mut parts = value.split_whitespace();
    let (Some(alg), Some(key_id), Some(mac), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Verdict::Malformed;
    };
    if !alg.eq_ignore_ascii_case(SIGNATURE_ALGORITHM)
        || mac.len() != 64
        || !mac.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Verdict::Malformed;
    }
    let key_id = key_id.to_ascii_lowercase();
    let Some(key) = keys.iter().find(|k| k.id == key_id) else {
        return Verdict::UnknownKey { key_id };
    };
    let expected = key.mac(&canonical(body));
    match constant_time_eq(expected.as_bytes(), mac.to_ascii_lowercase().as_bytes()) {
        true => Verdict::Valid { key_id },
        false => Verdict::Wrong { key_id },
    }
}

/// The body as signed: LF line ends, no trailing whitespace at the end, no `Signature:` line
/// in the header block.
pub fn canonical(body: &str) -> String {
    let text = body.replace("\r\n", "\n");
    let text = text.trim_end();
    let lines: Vec<&str> = text.split('\n').collect();
    let end = header_end(&lines);
    lines
        .iter()
        .enumerate()
        .filter(|(i, l)| *i >= end || !is_signature_line(l))
        .map(|(_, l)| *l)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The value of the first `Signature:` line of the header block.
fn signature_value(body: &str) -> Option<String> {
    let text = body.replace("\r\n", "\n");
    let lines: Vec<&str> = text.split('\n').collect();
    let end = header_end(&lines);
    lines[..end]
        .iter()
        .find(|l| is_signature_line(l))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn is_signature_line(line: &str) -> bool {
    line.split_once(':')
        .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(SIGNATURE_HEADER))
}

/// The index of the header block's end: the first blank line after the marker (the body's
/// length when there is none).
fn header_end(lines: &[&str]) -> usize {
    lines
        .iter()
        .position(|l| l.trim().is_empty())
        .unwrap_or(lines.len())
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    let mut out = [0u8; 32];
    out.copy_from_slice(&outer.finalize());
    out
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A secret's fingerprint under `salt`, as hex: SHA-256 of the salt, a zero byte and the secret.
/// What a cache keeps to know whether it was written under the token in use, without keeping the
/// token or an unsalted hash of it.
pub(crate) fn salted_fingerprint(salt: &str, secret: &SecretString) -> String {
    let mut hash = Sha256::new();
    hash.update(salt.as_bytes());
    hash.update([0]);
    hash.update(secret.expose_secret().as_bytes());
    hex(&hash.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 and test case 6 (a key longer than the block).
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }
}
