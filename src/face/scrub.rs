//! Secrets never reach the terminal: every line forgestate writes on stderr, its log lines, and
//! every answer document a face prints or sends (the CLI's `--json` and human output,
//! `forgestate call`, MCP) pass through one scrubber, which knows the token in use and the
//! shapes of common secrets (URL passwords, `ghp_…` tokens, private keys). A secret typed by
//! mistake into a flag (`--set "$FORGESTATE_TOKEN"`) is echoed as `[REDACTED]`.

use std::path::Path;
use std::sync::OnceLock;

use secrecy::SecretString;

use forgestate::format::Redactor;

static SCRUBBER: OnceLock<Redactor> = OnceLock::new();

/// Learns the token in use: `$FORGESTATE_TOKEN` and the `--token-file` given, when readable,
/// and `$FORGESTATE_SIGNING_KEY`.
/// Called once, before anything is printed.
pub fn install(token_file: Option<&Path>) {
    let mut redactor = Redactor::default();
    let clean = |t: &str| t.trim().trim_start_matches('\u{feff}').trim().to_string();
    if let Ok(token) = std::env::var("FORGESTATE_TOKEN") {
        redactor = redactor.with_secret(&SecretString::from(clean(&token)));
    }
    // The signing key is a secret too (`docs/security.md`).
    if let Ok(key) = std::env::var("FORGESTATE_SIGNING_KEY") {
        redactor = redactor.with_secret(&SecretString::from(clean(&key)));
    }
    if let Some(text) = token_file.and_then(|p| std::fs::read_to_string(p).ok()) {
        redactor = redactor.with_secret(&SecretString::from(clean(&text)));
    }
    let _ = SCRUBBER.set(redactor);
}

/// `text` with every secret the scrubber knows replaced.
pub fn scrub(text: &str) -> String {
    scrubbed(text).unwrap_or_else(|| text.to_string())
}

/// `text` as [`forgestate::verbs::cli::printable`] makes it, scrubbed first: a zero-width
/// character inside a secret hides it no more than elsewhere, and once it is a space the secret
/// is two words.
pub fn printable(text: &str) -> String {
    forgestate::verbs::cli::printable(&scrub(text)).into_owned()
}

/// An answer document with every secret the scrubber knows replaced in every string, object
/// keys included, at any depth: the one scrub at the answer's boundary, where a face sends a
/// document it holds as a value (MCP's results, `forgestate call`). Records were redacted by the
/// library already; this catches what it did not write (warnings quoting a name or a server's
/// words, a cause, a reason).
pub fn scrub_answer(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Some(clean) = scrubbed(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_answer),
        Value::Object(map) => {
            map.values_mut().for_each(scrub_answer);
            let renamed: Vec<(String, String)> = map
                .keys()
                .filter_map(|k| Some((k.clone(), scrubbed(k)?)))
                .collect();
            for (old, mut new) in renamed {
                if let Some(v) = map.remove(&old) {
                    // Two keys may scrub to the same text: keep both values.
                    while map.contains_key(&new) {
                        new.push('#');
                    }
                    map.insert(new, v);
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// JSON text (one document, as serde_json writes it) with every string literal, object keys
/// included, scrubbed as [`scrub_answer`] does, and everything else kept byte for byte: the CLI
/// prints its typed answers in declaration order, which a `serde_json::Value` would not keep.
pub fn scrub_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..start]);
        let literal = &rest[start..super::string_end(rest.as_bytes(), start)];
        match serde_json::from_str::<String>(literal)
            .ok()
            .and_then(|s| scrubbed(&s))
        {
            Some(clean) => out.push_str(&serde_json::to_string(&clean).unwrap_or_default()),
            None => out.push_str(literal),
        }
        rest = &rest[start + literal.len()..];
    }
    out.push_str(rest);
    out
}

/// `text` scrubbed, when the scrubber replaced anything in it.
fn scrubbed(text: &str) -> Option<String> {
    let mut out = text.to_string();
    let redactor = SCRUBBER.get()?;
    (redactor.redact_text(&mut out) > 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_messages_are_replaced() {
        // No token installed in unit tests: the shapes alone.
        let _ = SCRUBBER.set(Redactor::default());
        let said = scrub("cannot reach https://bob:hunter2pw@forge.example.com/x");
        assert!(!said.contains("hunter2pw"), "{said}");
        assert!(scrub("plain words stay").eq("plain words stay"));
    }

    #[test]
    fn json_text_is_scrubbed_in_its_strings_only_and_keeps_its_order() {
        let _ = SCRUBBER.set(Redactor::default());
        let tok = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let text = format!(
            "{{\n  \"z\": \"x-{tok}\",\n  \"a\": [\"q\\\"{tok}\", 1, null],\n  \"{tok}\": true\n}}"
        );
        let clean = scrub_json(&text);
        assert!(!clean.contains(tok), "{clean}");
        let value: serde_json::Value = serde_json::from_str(&clean).unwrap();
        assert_eq!(value["z"], "x-[REDACTED]");
        assert_eq!(value["a"][0], "q\"[REDACTED]");
        assert_eq!(value["[REDACTED]"], true);
        assert!(
            clean.find("\"z\"") < clean.find("\"a\""),
            "order kept: {clean}"
        );
        let plain = "{\"a\": \"b\\\\\", \"c\": [true]}";
        assert_eq!(scrub_json(plain), plain, "nothing to scrub: byte for byte");
    }

    #[test]
    fn an_answer_value_is_scrubbed_everywhere() {
        let _ = SCRUBBER.set(Redactor::default());
        let tok = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let mut answer = serde_json::json!({
            "warnings": [format!("did you mean session \"job-{tok}\"?")],
            "record": {"session": format!("job-{tok}"), "data": {tok: [tok]}},
        });
        scrub_answer(&mut answer);
        assert!(!answer.to_string().contains(tok), "{answer}");
        assert_eq!(answer["record"]["data"]["[REDACTED]"][0], "[REDACTED]");
    }
}
