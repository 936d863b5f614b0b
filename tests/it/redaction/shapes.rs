//! Secrets recognised by their shape inside any string: the token in use, URL passwords, PEM
//! private keys and common token formats; only the secret part is replaced.

use forgestate::format::Redactor;
use secrecy::SecretString;

/// `text` scrubbed by a redactor with no key patterns and these secret values, and the count.
fn scrubbed(text: &str, secrets: &[&str]) -> (String, u64) {
    let redactor = secrets.iter().fold(Redactor::new([""; 0]), |r, s| {
        r.with_secret(&SecretString::from(s.to_string()))
    });
    let mut out = text.to_string();
    let count = redactor.redact_text(&mut out);
    (out, count)
}

#[test]
fn given_secrets_are_replaced_anywhere_in_a_string() {
    let tok = "0123456789abcdef0123456789abcdef01234567";
    assert_eq!(
        scrubbed(&format!("curl -H 'token {tok}' and again:{tok}."), &[tok]),
        ("curl -H 'token [REDACTED]' and again:[REDACTED].".into(), 2)
    );
    assert_eq!(
        scrubbed("nothing here", &[tok, ""]),
        ("nothing here".into(), 0)
    );
}

#[test]
fn url_passwords_are_replaced_and_the_rest_kept() {
    assert_eq!(
        scrubbed(
            "git remote: https://user:s3cr%40t@forge.example.com/acme/app.git",
            &[]
        ),
        (
            "git remote: https://user:[REDACTED]@forge.example.com/acme/app.git".into(),
            1
        )
    );
    assert_eq!(
        scrubbed(
            "https://x-access-token:abc@github.com/a/b https://oauth2:@h/",
            &[]
        ),
        (
            "https://x-access-token:[REDACTED]@github.com/a/b https://oauth2:@h/".into(),
            1
        )
    );
    let long = "https://0123456789abcdefghij0123@github.com/a";
    assert_eq!(scrubbed(long, &[]).0, "https://[REDACTED]@github.com/a");
    for kept in [
        "ssh://git@github.com/a/b",
        "https://example.com/a@b",
        "mailto:u@h",
    ] {
        assert_eq!(scrubbed(kept, &[]), (kept.to_string(), 0), "{kept}");
    }
    let already = "https://u:[REDACTED]@h/x";
    assert_eq!(scrubbed(already, &[]), (already.to_string(), 0));
}

#[test]
fn pem_private_keys_are_replaced_whole() {
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    assert_eq!(
        scrubbed(&format!("key:\n{key}\nafter"), &[]),
        ("key:\n[REDACTED]\nafter".into(), 1)
    );
    assert_eq!(
        scrubbed("-----BEGIN RSA PRIVATE KEY-----\nMIIE (truncated", &[]),
        ("[REDACTED]".into(), 1)
    );
    let cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    assert_eq!(scrubbed(cert, &[]).1, 0, "public material is kept");
}

#[test]
fn common_token_formats_are_replaced() {
    let cases = [
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "glpat-abcdefghij0123456789",
        "xoxb-123456789012-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA-0123456789abcdefghijklmnopqrstu",
        "sk-proj-abcdefghij0123456789XYZ",
        "sk-ant-api03-abcdefghij0123456789",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "whsec_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH+a/b=",
    ];
    for token in cases {
        assert_eq!(
            scrubbed(&format!("token={token} end"), &[]),
            ("token=[REDACTED] end".into(), 1),
            "{token}"
        );
    }
    assert_eq!(
        scrubbed("Authorization: Bearer abcdef0123456789abcdef", &[]),
        ("Authorization: Bearer [REDACTED]".into(), 1)
    );
}

#[test]
fn distinctive_prefixes_are_found_inside_a_word() {
    let tok = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    for glued in ["x-", "x_", "1", "id"] {
        assert_eq!(
            scrubbed(&format!("a={glued}{tok} end"), &[]),
            (format!("a={glued}[REDACTED] end"), 1),
            "{glued}"
        );
    }
    assert_eq!(
        scrubbed("p_xoxb-123456789012-abcdefghij", &[]),
        ("p_[REDACTED]".into(), 1)
    );
}

#[test]
fn a_dash_starts_a_word_for_every_format() {
    for (text, want) in [
        ("build-AKIAIOSFODNN7EXAMPLE", "build-[REDACTED]"),
        (
            "job-AIzaSyA-0123456789abcdefghijklmnopqrstu",
            "job-[REDACTED]",
        ),
        ("x-sk-proj-abcdefghij0123456789XYZ", "x-[REDACTED]"),
        ("x-hf_abcdefghijklmnopqrstuvwxyz0123", "x-[REDACTED]"),
        ("x-sk_live_0123456789abcdefXYZ", "x-[REDACTED]"),
    ] {
        assert_eq!(scrubbed(text, &[]), (want.to_string(), 1), "{text}");
    }
}

#[test]
fn ordinary_text_is_kept() {
    for kept in [
        "task_sk-0123456789abcdefghij0123",
        "ghp_short",
        "task_test_abcdefghijklmnopqrstuvwxyz",
        "ask-abcdefghijklmnopqrstuvwxyz0123",
        "subtask_3_complete",
        "Bearer of bad news, the bearer shares",
        "feat/issue-42 at 0123456789abcdef0123456789abcdef01234567",
        "AKIA is a prefix",
    ] {
        assert_eq!(scrubbed(kept, &[]), (kept.to_string(), 0), "{kept}");
    }
}

#[test]
fn overlapping_finds_count_once() {
    let tok = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let url = format!("https://x:{tok}@github.com/a");
    assert_eq!(
        scrubbed(&url, &[tok]),
        ("https://x:[REDACTED]@github.com/a".into(), 1)
    );
}
