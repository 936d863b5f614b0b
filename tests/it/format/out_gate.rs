//! The one out-gate: a clean body passes byte for byte, secrets are redacted and counted, and a
//! body that is not a record or whose header holds a secret is refused.

use std::borrow::Cow;

use forgestate::format::{GateError, Record, Redactor, Renderer, outbound, parse};
use secrecy::SecretString;
use serde_json::json;

fn body(data: serde_json::Value) -> String {
    let record = Record::checkpoint("w", "s", "p", data).unwrap();
    Renderer::embedded().unwrap().render(&record).unwrap()
}

#[test]
fn a_clean_body_passes_unchanged() {
    let clean = body(json!({"branch": "main", "tests": {"pass": true, "count": 3}}));
    let out = outbound(&clean, &Redactor::default(), &Renderer::embedded().unwrap()).unwrap();
    assert!(matches!(out, Cow::Borrowed(_)));
    assert_eq!(out, clean);
}

#[test]
fn secrets_are_redacted_and_counted() {
    let dirty =
        body(json!({"db_password": "hunter2", "note": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}));
    let out = outbound(&dirty, &Redactor::default(), &Renderer::embedded().unwrap()).unwrap();
    assert!(
        !out.contains("hunter2") && !out.contains("ghp_0123"),
        "{out}"
    );
    let record = parse(&out).unwrap();
    assert_eq!(record.redacted, Some(2));
    assert_eq!(record.data()["db_password"], "[REDACTED]");
}

#[test]
fn non_records_and_secret_headers_are_refused() {
    let r = Redactor::default();
    assert!(matches!(
        outbound("hello", &r, &Renderer::embedded().unwrap()),
        Err(GateError::NotARecord(_))
    ));
    let token = SecretString::from("f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed");
    let r = r.with_secret(&token);
    let record = Record::checkpoint(
        "w",
        "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed",
        "p",
        json!({}),
    )
    .unwrap();
    let text = Renderer::embedded().unwrap().render(&record).unwrap();
    assert!(matches!(
        outbound(&text, &r, &Renderer::embedded().unwrap()),
        Err(GateError::Secret(_))
    ));
}
