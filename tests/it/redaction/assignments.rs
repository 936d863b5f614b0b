//! Values given to secret-looking names inside a string: `NAME=value`, `name: value` and
//! `--name value`; numbers, booleans, comparisons and places (`--password-file`) are kept.

use forgestate::format::Redactor;

/// `text` scrubbed with these key patterns.
fn scrubbed(keys: &[&str], text: &str) -> String {
    let mut out = text.to_string();
    Redactor::new(keys).redact_text(&mut out);
    out
}

#[test]
fn values_of_secret_names_are_found() {
    let keys = ["password", "secret", "token"];
    for (text, want) in [
        (
            "export AWS_SECRET_ACCESS_KEY=abc/Def+1",
            "export AWS_SECRET_ACCESS_KEY=[REDACTED]",
        ),
        (
            "https://h/x?user=a&password=hunter2&x=1",
            "https://h/x?user=a&password=[REDACTED]&x=1",
        ),
        (
            "run --db.password='p w' next",
            "run --db.password='[REDACTED]' next",
        ),
        (
            "TOKEN=\"x y\"; SECRET=z",
            "TOKEN=\"[REDACTED]\"; SECRET=[REDACTED]",
        ),
        // As a human answer prints a data value: JSON text with escaped quotes.
        (
            r#"deploy --password=\"k 1\" --verbose"#,
            r#"deploy --password=\"[REDACTED]\" --verbose"#,
        ),
    ] {
        assert_eq!(scrubbed(&keys, text), want, "{text}");
    }
}

#[test]
fn colon_and_flag_values_of_secret_names_are_found() {
    for (text, want) in [
        ("password: hunter2 next", "password: [REDACTED] next"),
        (
            r#"{"db_password": "p w"}"#,
            r#"{"db_password": "[REDACTED]"}"#,
        ),
        (
            r#"{\"db_password\": \"pw\"}"#,
            r#"{\"db_password\": \"[REDACTED]\"}"#,
        ),
        (
            "mysql --password hunter2 -h db",
            "mysql --password [REDACTED] -h db",
        ),
        ("Password: Bearer abc", "Password: Bearer [REDACTED]"),
        // The URL rule's, not a `name: value` running on to the host.
        (
            "https://password:x@host",
            "https://password:[REDACTED]@host",
        ),
    ] {
        assert_eq!(scrubbed(&["password"], text), want, "{text}");
    }
}

#[test]
fn other_names_numbers_comparisons_and_places_are_kept() {
    let keys = ["password", "secret", "token"];
    for kept in [
        "user=bob&page=2",
        "max_tokens=4096",
        "use_secret=true",
        "if token == x",
        "password=",
        "password=[REDACTED]&a=1",
        "=secret",
        r#"deploy --password=\"[REDACTED]\" --verbose"#,
        r#"{"password": null, "password_len": 12}"#,
        r#"{\"password\": \"[REDACTED]\"}"#,
        "--password-file /etc/pw",
        "--password --next",
        "password:",
    ] {
        assert_eq!(scrubbed(&keys, kept), kept);
    }
}
