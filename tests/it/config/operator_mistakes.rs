//! End-to-end: mistakes an operator makes setting forgestate up (a token pasted into the
//! configuration file, a token file that is a directory, a url without its scheme) exit 78 with
//! what went wrong and what to do, and never show the token.

use crate::common;
use common::cli::{Bin, stderr, words};

/// A token as Forgejo shows it: 40 hex digits.
const TOKEN: &str = "4f1c0ffee0ddba11deadbeefcafe0123456789ab";

fn bin(dir: &std::path::Path) -> Bin {
    Bin::new(dir)
        .dirs()
        .env("FORGESTATE_OWNER", "acme")
        .env("FORGESTATE_REPO", "app")
}

#[test]
fn a_token_pasted_into_the_config_file_is_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        // A key forgestate does not have, as a user guesses it.
        (
            "key.toml",
            format!("[forge]\nurl = \"https://forge.example.com\"\ntoken = \"{TOKEN}\"\n"),
        ),
        // An env file given as the configuration: not TOML at all.
        ("env.toml", format!("FORGESTATE_TOKEN={TOKEN}\n")),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
        let out = bin(dir.path())
            .env("FORGESTATE_URL", "https://forge.example.com")
            .run(&words(&format!("latest --config {name}")));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(78), "{name}: {err}");
        assert!(!err.contains(TOKEN), "{name}: the token is shown: {err}");
        assert!(
            err.contains(name) && err.contains("line "),
            "{name}: says neither the file nor where: {err}"
        );
        let json = bin(dir.path())
            .env("FORGESTATE_URL", "https://forge.example.com")
            .run(&words(&format!("latest --json --config {name}")));
        assert!(!common::cli::stdout(&json).contains(TOKEN), "{name} --json");
    }
    let out = bin(dir.path()).run(&words("latest --config key.toml"));
    let err = stderr(&out);
    assert!(
        err.contains("token_file") && err.contains("FORGESTATE_TOKEN"),
        "says not where the token goes: {err}"
    );
}

#[test]
fn a_token_file_that_is_a_directory_says_to_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("secrets")).unwrap();
    let out = bin(dir.path())
        .env("FORGESTATE_URL", "https://forge.example.com")
        .run(&words("latest --token-file secrets"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(err.contains("is a directory"), "{err}");
    assert!(
        err.contains("name the file that holds the token"),
        "says not what to do: {err}"
    );
    assert!(
        !err.contains("chmod"),
        "advises chmod on a directory: {err}"
    );
}

/// Whoever can write the token file chooses whose records this machine trusts as its own: a file
/// anyone may write, or one owned by another user, is refused with the fix, and the token is
/// never shown.
#[cfg(unix)]
#[test]
fn a_token_file_someone_else_may_write_is_refused() {
    use std::os::unix::fs::{PermissionsExt, chown};
    let dir = tempfile::tempdir().unwrap();
    let tok = dir.path().join("tok");
    let run = || {
        bin(dir.path())
            .env("FORGESTATE_URL", "https://forge.example.com")
            .run(&words("latest --token-file tok"))
    };
    for mode in [0o666, 0o602] {
        std::fs::write(&tok, TOKEN).unwrap();
        std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = run();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(78), "mode {mode:o}: {err}");
        assert!(
            err.contains("may be written by anyone") && err.contains("chmod 600"),
            "mode {mode:o}: says neither what is wrong nor the fix: {err}"
        );
        assert!(
            !err.contains(TOKEN),
            "mode {mode:o}: the token is shown: {err}"
        );
    }
    // Only root can give a file away; elsewhere the mode checks above stand alone.
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o600)).unwrap();
        chown(&tok, Some(65534), None).unwrap();
        let out = run();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(78), "{err}");
        assert!(err.contains("owned by another user (uid 65534)"), "{err}");
    }
}

#[test]
fn a_forge_url_without_its_scheme_says_how_to_write_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin(dir.path())
        .env("FORGESTATE_URL", "forge.example.com")
        .env("FORGESTATE_TOKEN", TOKEN)
        .run(&words("latest"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(err.contains("https://forge.example.com"), "{err}");
}
