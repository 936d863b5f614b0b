//! Forge coordinates from the git remote `origin`, as `tea` and `gh` find them, on real `git init`
//! repositories; and explicit settings always winning over it.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::{Command, Output};

use common::cli::{Bin, stderr};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use serde_json::Value;

/// A fresh repository in `dir` whose `origin` is `url`.
fn git_repo(dir: &Path, url: &str) {
    for args in [vec!["init", "-q"], vec!["remote", "add", "origin", url]] {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(&args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
}

/// Runs the binary in `dir` with the token and `env`, and nothing else configured.
fn run(dir: &Path, line: &str, env: &[(&str, &str)]) -> Output {
    Bin::new(dir)
        .dirs()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .envs(env)
        .line(line)
}

fn thread_of(out: &Output) -> String {
    assert!(out.status.success(), "{}", stderr(out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["thread"].as_str().unwrap_or_default().to_string()
}

async fn forge() -> (FakeForge, u64) {
    let fake = FakeForge::start().await;
    let n = fake_forge::session(&fake);
    (fake, n)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_origin_gives_url_owner_and_repo() {
    let (fake, n) = forge().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git_repo(d, &format!("{}/{OWNER}/{REPO}.git", fake.uri()));
    let out = run(d, "init --json -v", &[("FORGESTATE_TOKEN", BOT_TOKEN)]);
    assert!(
        thread_of(&out).ends_with(&format!("/{OWNER}/{REPO}/issues/{n}")),
        "{}",
        stderr(&out)
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "forge url {} inferred from git remote origin",
            fake.uri()
        )) && err.contains(&format!("forge owner {OWNER:?} inferred"))
            && err.contains(&format!("forge repo {REPO:?} inferred")),
        "-v says so: {err}"
    );
    let quiet = run(d, "init --json", &[("FORGESTATE_TOKEN", BOT_TOKEN)]);
    assert!(!stderr(&quiet).contains("inferred"), "{}", stderr(&quiet));

    // From a subdirectory too, as git itself would.
    let sub = d.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let out = Bin::new(&sub)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("XDG_CACHE_HOME", d.join("cache").display().to_string())
        .env("FORGESTATE_TOKEN", BOT_TOKEN)
        .line("init --json");
    assert!(thread_of(&out).ends_with(&format!("/issues/{n}")));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ssh_origin_gives_owner_and_repo_and_guesses_an_https_url() {
    let (fake, n) = forge().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git_repo(d, &format!("git@127.0.0.1:{OWNER}/{REPO}.git"));
    let uri = fake.uri();
    let out = run(
        d,
        "init --json -v",
        &[("FORGESTATE_TOKEN", BOT_TOKEN), ("FORGESTATE_URL", &uri)],
    );
    assert!(thread_of(&out).ends_with(&format!("/{OWNER}/{REPO}/issues/{n}")));
    assert!(
        !stderr(&out).contains("forge url"),
        "the configured url stands: {}",
        stderr(&out)
    );

    // With no url at all, an ssh remote names https on the same host, and -v says so. Nothing
    // listens on https://127.0.0.1 here, so the command then fails quickly: that is the point.
    std::fs::write(
        d.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\nconnect_timeout_secs = 1\nrequest_timeout_secs = 1\n",
    )
    .unwrap();
    let out = run(d, "latest --json -v", &[("FORGESTATE_TOKEN", BOT_TOKEN)]);
    let err = stderr(&out);
    assert!(
        err.contains("forge url https://127.0.0.1 inferred from git remote origin")
            && err.contains("an ssh remote"),
        "{err}"
    );
    assert!(!out.status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn explicit_settings_win_over_the_remote() {
    let (fake, n) = forge().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let uri = fake.uri();
    git_repo(d, &format!("{uri}/someone/elsewhere.git"));
    let token = ("FORGESTATE_TOKEN", BOT_TOKEN);
    let want = format!("/{OWNER}/{REPO}/issues/{n}");

    let env = [
        token,
        ("FORGESTATE_URL", &uri),
        ("FORGESTATE_OWNER", OWNER),
        ("FORGESTATE_REPO", REPO),
    ];
    let out = run(d, "init --json -v", &env);
    assert!(
        thread_of(&out).ends_with(&want),
        "environment beats the remote"
    );
    assert!(!stderr(&out).contains("inferred"), "{}", stderr(&out));

    let out = run(d, &format!("init --json --repo {OWNER}/{REPO}"), &[token]);
    assert!(
        thread_of(&out).ends_with(&want),
        "--repo owner/name beats the remote"
    );

    std::fs::write(
        d.join("ops.toml"),
        format!("[forge]\nowner = \"{OWNER}\"\nrepo = \"{REPO}\"\n"),
    )
    .unwrap();
    let out = run(d, "init --json --config ops.toml", &[token]);
    assert!(
        thread_of(&out).ends_with(&want),
        "the config file beats the remote"
    );
    std::fs::remove_file(d.join("ops.toml")).unwrap();

    // The remote alone names someone/elsewhere, which this forge does not have.
    let out = run(d, "init --json", &[token]);
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));

    // On another host than the configured forge, the remote says nothing about owner or repo.
    let other = tempfile::tempdir().unwrap();
    git_repo(
        other.path(),
        &format!("https://elsewhere.example/{OWNER}/{REPO}.git"),
    );
    let out = run(
        other.path(),
        "init --json -v",
        &[token, ("FORGESTATE_URL", &uri)],
    );
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(stderr(&out).contains("another host"), "{}", stderr(&out));
}

#[test]
fn without_a_token_or_url_a_checkout_keeps_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git_repo(d, "git@forge.example.com:acme/app.git");
    let out = run(d, "checkpoint --agent a --session s --phase p --json", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(d.join("state/forgestate/local/thread.jsonl").is_file());
}

/// What `-v` says was inferred from `origin` (a forge's url, owner and repo, and whether it
/// guessed the web address of an ssh remote), by a command that reaches no forge (`outbox`).
fn inferred(dir: &Path, flags: &str) -> Option<(String, String, String, bool)> {
    let line = format!("-v {flags} outbox");
    let out = run(dir, line.trim(), &[("FORGESTATE_TOKEN", BOT_TOKEN)]);
    let err = stderr(&out);
    assert!(out.status.success(), "{line}: {err}");
    let after = |lead: &str| {
        err.lines()
            .find_map(|l| l.split_once(lead).map(|(_, rest)| rest.to_string()))
    };
    let url = after("forge url ")?.split(' ').next()?.to_string();
    let name = |what: &str| {
        after(&format!("forge {what} \"")).and_then(|r| Some(r.split_once('"')?.0.to_string()))
    };
    let ssh = err.contains("an ssh remote");
    Some((
        url,
        name("owner").unwrap_or_default(),
        name("repo").unwrap_or_default(),
        ssh,
    ))
}

/// Every common shape of remote, and what is no forge's address.
#[test]
fn remotes_of_every_common_shape() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git_repo(d, "https://forge.example.com/acme/app.git");
    let forge = |url: &str, ssh: bool| Some((url.to_string(), "acme".into(), "app".into(), ssh));
    let cases = [
        (
            "https://forge.example.com/acme/app.git",
            forge("https://forge.example.com", false),
        ),
        (
            "https://bot@forge.example.com:3000/acme/app/",
            forge("https://forge.example.com:3000", false),
        ),
        (
            "http://127.0.0.1:8080/gitea/acme/app",
            forge("http://127.0.0.1:8080/gitea", false),
        ),
        (
            "git@forge.example.com:acme/app.git",
            forge("https://forge.example.com", true),
        ),
        (
            "forge.example.com:/acme/app.git",
            forge("https://forge.example.com", true),
        ),
        (
            "ssh://git@forge.example.com:2222/acme/app.git",
            forge("https://forge.example.com", true),
        ),
        ("/srv/git/app.git", None),
        ("../app", None),
        ("git://forge.example.com/acme/app.git", None),
        ("https://forge.example.com/app.git", None),
        ("git@forge.example.com:app.git", None),
    ];
    for (remote, want) in cases {
        let set = Command::new("git")
            .arg("-C")
            .arg(d)
            .args(["remote", "set-url", "origin", remote])
            .output()
            .expect("git runs");
        assert!(set.status.success(), "{set:?}");
        assert_eq!(inferred(d, ""), want, "{remote}");
    }
}

/// `--repo OWNER/NAME` gives the owner too (nothing left to infer), and is refused when it is
/// neither NAME nor OWNER/NAME, or names another owner than `--owner`.
#[test]
fn the_repo_flag_takes_owner_slash_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git_repo(d, "https://forge.example.com/zed/zap.git");
    let url = "https://forge.example.com".to_string();
    let given = |owner: &str| Some((url.clone(), owner.to_string(), String::new(), false));
    assert_eq!(inferred(d, "--repo acme/app"), given(""));
    assert_eq!(inferred(d, "--owner acme --repo acme/app"), given(""));
    assert_eq!(inferred(d, "--repo app"), given("zed"));
    for bad in [
        "--repo acme/",
        "--repo a/b/c",
        "--owner other --repo acme/app",
    ] {
        let out = run(
            d,
            &format!("{bad} outbox"),
            &[("FORGESTATE_TOKEN", BOT_TOKEN)],
        );
        assert_eq!(out.status.code(), Some(64), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("--repo"), "{bad}: {}", stderr(&out));
    }
}
