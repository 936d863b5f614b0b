//! Redaction at the boundary: secrets never reach a comment, which everyone who can read the
//! repository can read.

use serde_json::Value;

/// What replaces a redacted value.
pub const REDACTED: &str = "[REDACTED]";

/// The keys redacted unless configured otherwise (matched case-insensitively, at any depth).
pub const DEFAULT_REDACT_KEYS: [&str; 9] = [
    "token",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "authorization",
    "private_key",
    "access_key",
];

/// Replaces the value of every object key in `keys` (case-insensitive), at any depth, with
/// `"[REDACTED]"`. Returns how many values were replaced.
pub fn redact(value: &mut Value, keys: &[String]) -> u64 {
    match value {
        Value::Object(map) => map
            .iter_mut()
            .map(|(k, v)| {
                if keys.iter().any(|key| key.eq_ignore_ascii_case(k)) {
                    *v = Value::String(REDACTED.to_string());
                    1
                } else {
                    redact(v, keys)
                }
            })
            .sum(),
        Value::Array(items) => items.iter_mut().map(|v| redact(v, keys)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacts_at_any_depth_case_insensitively() {
        let keys: Vec<String> = DEFAULT_REDACT_KEYS.iter().map(|k| k.to_string()).collect();
        let mut v = json!({
            "Token": "abc", "branch": "b",
            "deploy": {"API_KEY": "k", "hosts": [{"password": {"nested": 1}}, {"user": "u"}]},
        });
        assert_eq!(redact(&mut v, &keys), 3);
        assert_eq!(
            v,
            json!({"Token": "[REDACTED]", "branch": "b",
                   "deploy": {"API_KEY": "[REDACTED]", "hosts": [{"password": "[REDACTED]"}, {"user": "u"}]}})
        );
        assert_eq!(
            redact(&mut json!({"tokens": 1, "x": "token"}), &keys),
            0,
            "whole keys only"
        );
    }
}
