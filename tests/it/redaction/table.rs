//! Redaction, as a table (issue #18, class 3): every key name and value shape that must be
//! redacted, and the values under a matching key that must be kept (numbers and booleans).

use forgestate::format::{REDACTED, Redactor};
use secrecy::SecretString;
use serde_json::{Value, json};

const TOKEN: &str = "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed";

fn redactor() -> Redactor {
    Redactor::default().with_secret(&SecretString::from(TOKEN))
}

/// `(data, what must come out)`.
fn table() -> Vec<(Value, Value)> {
    vec![
        // Key names.
        (
            json!({"passphrase": "correct horse"}),
            json!({"passphrase": REDACTED}),
        ),
        (
            json!({"gpg_passphrase": "x y z"}),
            json!({"gpg_passphrase": REDACTED}),
        ),
        (json!({"pwd": "hunter2"}), json!({"pwd": REDACTED})),
        (json!({"DB_PWD": "hunter2"}), json!({"DB_PWD": REDACTED})),
        (
            json!({"session_key": "abc"}),
            json!({"session_key": REDACTED}),
        ),
        (
            json!({"sessionKey": "abc"}),
            json!({"sessionKey": REDACTED}),
        ),
        (
            json!({"github_token": "anything"}),
            json!({"github_token": REDACTED}),
        ),
        (
            json!({"db_password": "p"}),
            json!({"db_password": REDACTED}),
        ),
        // Numbers and booleans under a matching key hold no secret.
        (
            json!({"pass": true, "password_set": false}),
            json!({"pass": true, "password_set": false}),
        ),
        (
            json!({"max_tokens": 4096, "pwd_len": 12}),
            json!({"max_tokens": 4096, "pwd_len": 12}),
        ),
        (json!({"session_key": null}), json!({"session_key": null})),
        // Shapes inside strings.
        (
            json!({"cmd": "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}),
            json!({"cmd": "export AWS_SECRET_ACCESS_KEY=[REDACTED]"}),
        ),
        (
            json!({"url": "https://db.example/login?user=bob&password=hunter2&next=/x"}),
            json!({"url": "https://db.example/login?user=bob&password=[REDACTED]&next=/x"}),
        ),
        (
            json!({"argv": "deploy --api-key=\"k 1\" --verbose"}),
            json!({"argv": "deploy --api-key=\"[REDACTED]\" --verbose"}),
        ),
        (
            json!({"note": "max_tokens=4096 and pass=true stay"}),
            json!({"note": "max_tokens=4096 and pass=true stay"}),
        ),
        // Our own token, whole, in another case, and with a zero-width character inside.
        (
            json!({"t": format!("token {TOKEN}")}),
            json!({"t": "token [REDACTED]"}),
        ),
        (
            json!({"t": format!("x{}y", TOKEN.to_uppercase())}),
            json!({"t": "x[REDACTED]y"}),
        ),
        (
            json!({"t": format!("a {}\u{200B}{} b", &TOKEN[..10], &TOKEN[10..])}),
            json!({"t": "a [REDACTED] b"}),
        ),
        (
            json!({"t": format!("{}\u{2060}{}\u{FEFF}{}", &TOKEN[..3], &TOKEN[3..20], &TOKEN[20..])}),
            json!({"t": REDACTED}),
        ),
        // A token format with a zero-width character inside.
        (
            json!({"t": "ghp_0123456789\u{200C}abcdefghijABCDEFGHIJ012345"}),
            json!({"t": REDACTED}),
        ),
        // Ordinary text is kept, zero-width characters and all.
        (
            json!({"t": "a\u{200B}b", "phase": "subtask_3"}),
            json!({"t": "a\u{200B}b", "phase": "subtask_3"}),
        ),
    ]
}

#[test]
fn the_redaction_table_holds() {
    let r = redactor();
    for (input, want) in table() {
        let mut got = input.clone();
        r.redact(&mut got);
        assert_eq!(got, want, "for {input}");
    }
}

#[test]
fn the_token_with_a_zero_width_character_is_known_to_hold_the_secret() {
    let r = redactor();
    assert!(r.holds_secret(&format!("{}\u{200B}{}", &TOKEN[..5], &TOKEN[5..])));
    assert!(!r.holds_secret("f00dfeed"));
}

#[test]
fn the_stderr_scrubber_finds_assignments_too() {
    let r = Redactor::default();
    let mut line = "cannot run `PGPASSWORD=s3cret psql`".to_string();
    assert_eq!(r.redact_text(&mut line), 1);
    assert_eq!(line, "cannot run `PGPASSWORD=[REDACTED] psql`");
}
