//! The forge token in use never reaches a comment, wherever it appears in a record: the front
//! door hands it to the redactor, so a library user cannot forget to.

use crate::fake_forge;
use std::time::Duration;

use crate::common::cli::{Bin, args, stderr, stdout};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use forgestate::Client;
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::{Record, parse};
use secrecy::SecretString;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn the_token_in_use_is_scrubbed_from_every_field_and_value() {
    let fake = FakeForge::start().await;
    let label = fake.add_label("Type/Automation");
    let n = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let client = Client::forge(fake.uri(), OWNER, REPO)
        .token(SecretString::from(BOT_TOKEN))
        .cache_dir(dir.path().join("cache"))
        .outbox(dir.path().join("outbox"))
        .retry_budget(Duration::from_millis(300))
        .build()
        .unwrap();
    let record = Record::checkpoint(
        "implementation-worker",
        "s1",
        "clone_complete",
        json!({
            "log": format!("git push https://x-access-token:{BOT_TOKEN}@forge/acme/app"),
            "env": {"GIT_ASKPASS_VALUE": BOT_TOKEN},
            "args": ["--token-value", BOT_TOKEN],
            "note": format!("the bot token is {BOT_TOKEN}."),
        }),
    )
    .unwrap();
    let posted = client.save(record).await.posted().unwrap();
    let comments = fake.comments_on(n);
    assert_eq!(comments.len(), 1);
    let body = &comments[0].body;
    assert!(!body.contains(BOT_TOKEN), "{body}");
    let back = parse(body).unwrap();
    assert_eq!(back.data()["note"], "the bot token is [REDACTED].");
    assert!(back.redacted.unwrap_or(0) >= 4, "{:?}", back.redacted);
    assert_eq!(posted.record.redacted, back.redacted);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spooled_body_holding_the_token_in_use_is_redacted_on_its_way_out() {
    use forgestate::durable::Outbox;
    use forgestate::format::Renderer;
    let fake = FakeForge::start().await;
    let label = fake.add_label("Type/Automation");
    let n = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    // Spooled elsewhere, under another token: redaction then did not know this one.
    let other = Outbox::new(dir.path().join("elsewhere"));
    let renderer = Renderer::embedded().unwrap();
    let leaky = Record::checkpoint(
        "w",
        "s",
        "p",
        json!({"cmd": format!("curl -H 'Authorization: token {}'", BOT_TOKEN.to_uppercase())}),
    )
    .unwrap();
    let fine = Record::checkpoint("w", "s", "q", json!({"step": 2})).unwrap();
    other.push(&renderer.render(&leaky).unwrap()).unwrap();
    other.push(&renderer.render(&fine).unwrap()).unwrap();
    let client = Client::forge(fake.uri(), OWNER, REPO)
        .token(SecretString::from(BOT_TOKEN))
        .cache_dir(dir.path().join("cache"))
        .retry_budget(Duration::from_millis(300))
        .build()
        .unwrap();
    let report = client.durable_raw().flush_from(&other).await;
    assert!(report.moved_aside.is_empty(), "{report:?}");
    assert_eq!(report.posted.len(), 2, "{report:?}");
    let bodies: Vec<String> = fake.comments_on(n).into_iter().map(|c| c.body).collect();
    assert_eq!(bodies.len(), 2, "both records are posted, in order");
    assert!(bodies.iter().all(|b| !b.to_lowercase().contains(BOT_TOKEN)));
    let first = parse(&bodies[0]).unwrap();
    assert_eq!(
        first.data()["cmd"],
        "curl -H 'Authorization: token [REDACTED]'"
    );
    assert_eq!(first.redacted, Some(1));
    assert_eq!(parse(&bodies[1]).unwrap().phase(), Some("q"));
}

#[tokio::test(flavor = "multi_thread")]
async fn checkpoint_parent_never_posts_the_forge_token() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "checkpoint",
        "--agent",
        "w",
        "--session",
        "s",
        "--phase",
        "p",
        "--parent",
        BOT_TOKEN,
    ]));
    // Refused as not a record id (usage), before it could reach a header; never echoed.
    assert_eq!(
        out.status.code(),
        Some(64),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(!stderr(&out).contains(BOT_TOKEN) && !stdout(&out).contains(BOT_TOKEN));
    let bodies: Vec<String> = fake
        .state()
        .comments
        .iter()
        .map(|c| c.body.clone())
        .collect();
    for body in bodies {
        assert!(
            !body.contains(BOT_TOKEN),
            "the forge token is in a comment: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_redact_keys_replace_the_default_list_and_the_token_stays_scrubbed() {
    use forgestate::config::{Config, Overrides};
    let fake = FakeForge::start().await;
    let label = fake.add_label("Type/Automation");
    let n = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("forgestate.toml");
    let toml = format!(
        "redact_keys = [\"ticket\"]\n\n[forge]\nurl = \"{}\"\nowner = \"{OWNER}\"\nrepo = \
         \"{REPO}\"\nretry_budget_secs = 0\n",
        fake.uri()
    );
    std::fs::write(&file, toml).unwrap();
    let over = Overrides {
        config: Some(file),
        ..Overrides::default()
    };
    let env = |k: &str| (k == "FORGESTATE_TOKEN").then(|| BOT_TOKEN.to_string());
    let config = Config::load_with(over, &env, dir.path()).unwrap();
    let client = Client::from_config(&config).unwrap();
    let record = Record::checkpoint(
        "implementation-worker",
        "s1",
        "clone_complete",
        json!({"ticket": "T-1", "password": "kept", "note": format!("token {BOT_TOKEN}")}),
    )
    .unwrap();
    client.save(record).await.posted().unwrap();
    let comments = fake.comments_on(n);
    let back = parse(&comments[0].body).unwrap();
    assert_eq!(back.data()["ticket"], "[REDACTED]", "the configured key");
    assert_eq!(
        back.data()["password"],
        "kept",
        "the default list is replaced"
    );
    assert_eq!(back.data()["note"], "token [REDACTED]", "the token in use");
}
