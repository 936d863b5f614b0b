//! The redaction policy: values under secret-looking keys at any depth, the token in use in
//! every string and key, records scrubbed in their data and refused in their headers.

use forgestate::format::{DEFAULT_REDACT_KEYS, FieldError, Record, Redactor, redact};
use secrecy::SecretString;
use serde_json::json;

#[test]
fn redacts_at_any_depth_whatever_the_case() {
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
}

#[test]
fn keys_match_by_normalised_pattern() {
    let r = Redactor::default();
    for key in [
        "api_token",
        "github_token",
        "access_token",
        "client_secret",
        "db_password",
        "AWS_SECRET_ACCESS_KEY",
        "aws-access-key-id",
        "api-key",
        "ApiKey",
        "ssh_private_key",
        "privateKey",
        "MYSQL_PASSWD",
        "credentials",
        "Authorization",
        "Set-Cookie",
    ] {
        assert!(r.key_matches(key), "{key}");
    }
    for key in [
        "branch_name",
        "author",
        "issue_number",
        "phase",
        "key",
        "pass",
    ] {
        assert!(!r.key_matches(key), "{key}");
    }
    let custom = Redactor::new(["Session-Key"]);
    assert!(custom.key_matches("SESSION_KEY") && !custom.key_matches("token"));
    assert!(
        !Redactor::new(["", "-"]).key_matches("anything"),
        "empty patterns match nothing"
    );
}

#[test]
fn null_booleans_and_numbers_are_kept_and_redaction_is_idempotent() {
    let r = Redactor::default();
    let mut v = json!({"use_token": true, "password": null, "token": "[REDACTED]",
                       "max_tokens": 4096, "secret": "s3cr3t"});
    assert_eq!(r.redact(&mut v), 1);
    assert_eq!(
        v,
        json!({"use_token": true, "password": null, "token": "[REDACTED]",
               "max_tokens": 4096, "secret": "[REDACTED]"})
    );
    assert_eq!(r.redact(&mut v), 0);
}

#[test]
fn the_token_in_use_is_scrubbed_from_every_string_and_key() {
    let token = SecretString::from("f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed");
    let r = Redactor::default().with_secret(&token);
    let mut v = json!({
        "log": ["GET /api/v1/user with f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed -> 200"],
        "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed": 1,
        "remote": "https://bot:pw@forge/x.git",
    });
    assert_eq!(r.redact(&mut v), 3);
    assert_eq!(
        v,
        json!({"log": ["GET /api/v1/user with [REDACTED] -> 200"], "[REDACTED]": 1,
               "remote": "https://bot:[REDACTED]@forge/x.git"})
    );
    let shown = format!("{r:?}");
    assert!(!shown.contains("f00dfeed"), "{shown}");
    assert!(shown.contains("1 hidden"), "{shown}");
}

#[test]
fn records_are_scrubbed_in_data_and_refused_in_headers() {
    let token = SecretString::from("tok-0123456789");
    let r = Redactor::default().with_secret(&token);
    let mut c = Record::checkpoint(
        "agent",
        "s",
        "p",
        json!({"github_token": "ghp_x", "log": "tok-0123456789", "n": 1}),
    )
    .unwrap();
    assert_eq!(r.redact_record(&mut c), Ok(2));
    assert_eq!(
        c.data(),
        &json!({"github_token": "[REDACTED]", "log": "[REDACTED]", "n": 1})
    );
    assert_eq!(c.redacted, Some(2));
    let mut clean = Record::checkpoint("a", "s", "p", json!({"k": "v"})).unwrap();
    assert_eq!(r.redact_record(&mut clean), Ok(0));
    assert_eq!(clean.redacted, None);
}

#[test]
fn secret_shaped_header_values_are_refused_not_scrubbed() {
    let token = SecretString::from("tok-0123456789");
    let r = Redactor::default().with_secret(&token);
    let session = Record::checkpoint("a", "AKIAIOSFODNN7EXAMPLE", "p", json!({})).unwrap();
    let agent = Record::checkpoint("w-tok-0123456789", "s", "p", json!({})).unwrap();
    let phase = Record::checkpoint("a", "s", "ghp_0123456789abcdefghijABCDEFGHIJ01", json!({}));
    let status = Record::health("a", "s", "ok tok-0123456789", json!({}), None).unwrap();
    let next = Record::health("a", "s", "ok", json!({}), Some("TOK-0123456789")).unwrap();
    let handoff = |next: Option<&str>, blocker: Option<&str>| {
        Record::checkpoint("a", "s", "p", json!({}))
            .unwrap()
            .with_handoff(
                next.map(Into::into),
                blocker.into_iter().map(Into::into).collect(),
            )
            .unwrap()
    };
    let next_step = handoff(Some("paste tok-0123456789 into CI"), None);
    let blocker = handoff(None, Some("CI wants token tok-0123456789"));
    for (mut record, field) in [
        (next_step, "next"),
        (blocker, "blocker"),
        (session, "session"),
        (agent, "agent"),
        (phase.unwrap(), "phase"),
        (status, "status"),
        (next, "next check"),
    ] {
        let before = record.clone();
        assert_eq!(
            r.redact_record(&mut record),
            Err(FieldError::LooksLikeSecret { field })
        );
        assert_eq!(record, before, "{field}: nothing scrubbed");
    }
    let msg = FieldError::LooksLikeSecret { field: "session" }.to_string();
    assert!(msg.starts_with("session looks like a secret"), "{msg}");
}

#[test]
fn keys_that_redact_alike_keep_every_value() {
    let a = "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let b = "ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let c = "ghp_cccccccccccccccccccccccccccccccccccc";
    let r = Redactor::default();
    let mut v = json!({"usage_by_id": {a: 10, b: 20, c: 30, "[REDACTED]#2": 0}});
    assert_eq!(r.redact(&mut v), 3);
    let usage = v["usage_by_id"].as_object().unwrap();
    assert_eq!(usage.len(), 4, "{v}");
    let mut values: Vec<i64> = usage.values().filter_map(|x| x.as_i64()).collect();
    values.sort_unstable();
    assert_eq!(values, [0, 10, 20, 30]);
    assert!(usage.keys().all(|k| k.starts_with("[REDACTED]")), "{v}");
    assert_eq!(
        usage["[REDACTED]#2"], 0,
        "an existing key is never overwritten"
    );
    assert_eq!(r.redact(&mut v), 0, "idempotent");
}

#[test]
fn the_token_in_use_is_found_whatever_its_ascii_case() {
    let token = SecretString::from("f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed");
    let r = Redactor::default().with_secret(&token);
    let mut v = json!({"log": "auth F00DFEEDF00DFEEDF00DFEEDF00DFEEDF00DFEED ok",
                       "mixed": "F00dFeedf00dfeedf00dfeedf00dfeedf00dfeed"});
    assert_eq!(r.redact(&mut v), 2);
    assert_eq!(
        v,
        json!({"log": "auth [REDACTED] ok", "mixed": "[REDACTED]"})
    );
}
