//! Turning signing on for a thread that already exists (issue #29 hole 2): the records posted
//! before the thread's first signed one stay readable, marked `unsigned`, with one summary
//! warning; `[signing] require_signatures = true` refuses them; an unsigned record posted after
//! the first signed one is refused either way. On both stores, and through the CLI.

use crate::{common, fake_forge};

use fake_forge::{FakeForge, bot, session};
use forgestate::format::{Record, Renderer, SigningKey};
use forgestate::report::status::StatusPolicy;
use forgestate::scan::Filter;
use forgestate::store::Thread;
use forgestate::{Client, backend::AnyThread};
use serde_json::{Value, json};

use common::cli::{Bin, stderr, stdout};

const W: &str = "implementation-worker";

fn cp(phase: &str) -> Record {
    Record::checkpoint(W, "s1", phase, json!({"step": phase})).unwrap()
}

fn key() -> SigningKey {
    SigningKey::new("team signing secret").unwrap()
}

fn summaries(warnings: &[String]) -> usize {
    warnings
        .iter()
        .filter(|w| w.contains("carry no signature") || w.contains("records are not believed"))
        .count()
}

/// Two unsigned records, then what a reader with the key makes of them.
async fn turned_on(plain: &Client<AnyThread>, signed: &Client<AnyThread>) {
    plain.save(cp("clone_complete")).await.posted().unwrap();
    plain.save(cp("subtask_1_complete")).await.posted().unwrap();
    let r = signed.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "subtask_1_complete", "{:?}", r.warnings);
    assert!(r.resume.checkpoint.is_some(), "not a fresh start");
    assert_eq!(r.warnings.len(), 1, "one summary warning: {:?}", r.warnings);
    assert!(r.warnings[0].contains("2 record(s) carry no signature"));
    let listed = signed.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 2);
    assert!(listed.entries.iter().all(|e| e.comment.unsigned));
    let status = signed
        .status(&Filter::default(), &StatusPolicy::default())
        .await
        .unwrap();
    assert_eq!(status.rows.len(), 1, "status is not emptied");

    // The first signed record closes the door behind it: an unsigned one posted after it (with
    // the token, without the key) is not believed.
    signed
        .save(cp("subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    let forged = Renderer::embedded()
        .unwrap()
        .render(&cp("pr_created"))
        .unwrap();
    plain.thread_raw().append(&forged).await.unwrap();
    let r = signed.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "subtask_2_complete");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("not believed")
                && w.contains("after the thread's first signed record")),
        "{:?}",
        r.warnings
    );
    let listed = signed.list(&Filter::default(), None).await.unwrap();
    let marks: Vec<bool> = listed.entries.iter().map(|e| e.comment.unsigned).collect();
    assert_eq!(marks, [true, true, false]);
}

#[tokio::test(flavor = "multi_thread")]
async fn older_unsigned_records_stay_readable_on_the_forge() {
    let fake = FakeForge::start().await;
    session(&fake);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let signed = bot(&fake, b.path()).with_signing_keys(vec![key()]);
    turned_on(&bot(&fake, a.path()), &signed).await;
    // Required, none of the old ones counts, and they share one warning.
    let strict = bot(&fake, tempfile::tempdir().unwrap().path())
        .with_signing_keys(vec![key()])
        .with_required_signatures(true);
    let r = strict.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "subtask_2_complete");
    assert_eq!(summaries(&r.warnings), 1, "{:?}", r.warnings);
    let listed = strict.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn older_unsigned_records_stay_readable_on_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let plain = Client::local_as(dir.path(), "me").unwrap();
    let signed = Client::local_as(dir.path(), "me")
        .unwrap()
        .with_signing_keys(vec![key()]);
    turned_on(&plain, &signed).await;
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_str(&stdout(out)).unwrap()
}

#[test]
fn the_cli_reads_older_unsigned_records_unless_signatures_are_required() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let plain = Bin::new(dir.path());
    for phase in ["clone_complete", "subtask_1_complete"] {
        let out = plain.line(&format!(
            "--store {store} checkpoint --agent {W} --session s1 --phase {phase}"
        ));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let keyed = Bin::new(dir.path()).env("FORGESTATE_SIGNING_KEY", "team signing secret");
    let resume = format!("--store {store} resume --agent {W} --session s1 --json");
    let answer = json_of(&keyed.line(&resume));
    assert_eq!(answer["phase"], "subtask_1_complete", "{answer}");
    assert_eq!(answer["fresh_start"], false, "{answer}");
    assert_eq!(answer["warnings"].as_array().unwrap().len(), 1, "{answer}");
    let listed = json_of(&keyed.line(&format!("--store {store} list --json")));
    assert!(listed.to_string().contains("\"unsigned\":true"), "{listed}");

    let config = dir.path().join("strict.toml");
    std::fs::write(&config, "[signing]\nrequire_signatures = true\n").unwrap();
    let strict = format!("--config {} {resume}", config.display());
    let answer = json_of(&keyed.line(&strict));
    assert_eq!(answer["fresh_start"], true, "{answer}");
    let warnings = answer["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "one summary warning: {answer}");
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .contains("2 records are not believed"),
        "{answer}"
    );
}
