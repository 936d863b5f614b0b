//! Tamper evidence: a record whose comment a person with write access edited after it was
//! posted is flagged by `resume` and `list`; with a signing key, a record whose signature is
//! missing (posted with the bot's own token, but not by a holder of the key) or no longer
//! matches (edited) is not believed: readers answer the newest valid record and warn.

use crate::{common, fake_forge};
use std::path::Path;

use fake_forge::{FakeForge, OPS_TOKEN, session};
use forgestate::Client;
use forgestate::format::{Record, Renderer, SigningKey};
use forgestate::scan::Filter;
use forgestate::store::Thread;
use serde_json::json;

use crate::fake_forge::bot;
use common::cli::store_args;
use common::cli::{Bin, stderr, stdout};

const W: &str = "implementation-worker";

fn cp(phase: &str) -> Record {
    Record::checkpoint(W, "s1", phase, json!({"step": phase})).unwrap()
}

fn key(secret: &str) -> SigningKey {
    SigningKey::new(secret).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_record_is_flagged_by_resume_and_list() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp("clone_complete")).await.posted().unwrap();
    let posted = c.save(cp("subtask_1_complete")).await.posted().unwrap();
    let clean = c.resume(W, "s1").await.unwrap();
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    fake.age(600); // posted ten minutes ago

    // A person with write access (not the bot) edits the bot's newest checkpoint in the web UI.
    let body = fake.comments_on(n)[1].body.clone();
    let forged = body.replace("\"step\": \"subtask_1_complete\"", "\"step\": \"rm -rf\"");
    assert_ne!(forged, body);
    assert_eq!(
        fake.edit_comment_as(OPS_TOKEN, posted.comment_id, &forged)
            .await,
        200
    );

    let resumed = c.resume(W, "s1").await.unwrap();
    let warning = resumed
        .warnings
        .iter()
        .find(|w| w.contains("edited after posting"))
        .unwrap_or_else(|| panic!("flagged: {:?}", resumed.warnings));
    assert!(
        warning.contains(&format!("comment {}", posted.comment_id)),
        "{warning}"
    );
    assert!(warning.contains("changed at "), "the edit time: {warning}");
    let listed = c.list(&Filter::default(), None).await.unwrap();
    let flagged: Vec<&String> = listed
        .warnings
        .iter()
        .filter(|w| w.contains("edited after posting"))
        .collect();
    assert_eq!(
        flagged.len(),
        1,
        "only the edited one: {:?}",
        listed.warnings
    );
    assert!(listed.entries[1].comment.edited && !listed.entries[0].comment.edited);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_key_edited_and_unsigned_records_are_not_believed() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let signed = bot(&fake, dir.path()).with_signing_keys(vec![key("team secret")]);
    signed.save(cp("clone_complete")).await.posted().unwrap();
    let second = signed
        .save(cp("subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    assert!(
        fake.comments_on(n)[1]
            .body
            .contains("\nSignature: hmac-sha256 ")
    );
    assert_eq!(
        signed.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );

    // Someone holding the bot's token, but not the key, posts a newer checkpoint.
    let unsigned = Renderer::embedded()
        .unwrap()
        .render(&cp("pr_created"))
        .unwrap();
    let other = tempfile::tempdir().unwrap();
    bot(&fake, other.path())
        .thread_raw()
        .append(&unsigned)
        .await
        .unwrap();
    let r = signed.resume(W, "s1").await.unwrap();
    assert_eq!(
        r.resume.phase, "subtask_1_complete",
        "the unsigned one is not believed"
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("not believed: it carries no signature")),
        "{:?}",
        r.warnings
    );
    // A reader without the key believes it: the key is what makes the difference.
    let keyless = tempfile::tempdir().unwrap();
    assert_eq!(
        bot(&fake, keyless.path())
            .resume(W, "s1")
            .await
            .unwrap()
            .resume
            .phase,
        "pr_created"
    );

    // A writer edits the signed second checkpoint: its signature no longer matches.
    let body = fake.comments_on(n)[1].body.clone();
    let edited = body.replace("Phase: subtask_1_complete", "Phase: all_subtasks_complete");
    assert_eq!(
        fake.edit_comment_as(OPS_TOKEN, second.comment_id, &edited)
            .await,
        200
    );
    let r = signed.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "clone_complete", "the newest valid record");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains(&format!("comment {}", second.comment_id))
                && w.contains("does not match its content")),
        "{:?}",
        r.warnings
    );
    let listed = signed.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 1);
    assert_eq!(
        listed
            .rejected
            .iter()
            .filter(|r| r.code.code() == "not_believed")
            .count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotated_key_still_verifies_and_an_unknown_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let old = Client::local_as(dir.path(), "me")
        .unwrap()
        .with_signing_keys(vec![key("old")]);
    old.save(cp("clone_complete")).await.posted().unwrap();
    let new = Client::local_as(dir.path(), "me")
        .unwrap()
        .with_signing_keys(vec![key("new"), key("old")]);
    new.save(cp("subtask_1_complete")).await.posted().unwrap();
    let listed = new.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 2, "{:?}", listed.warnings);
    // A reader holding only the new key does not believe the old key's record.
    let only_new = Client::local_as(dir.path(), "me")
        .unwrap()
        .with_signing_keys(vec![key("new")]);
    let listed = only_new.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 1);
    assert!(
        listed
            .warnings
            .iter()
            .any(|w| w.contains("which this reader does not hold"))
    );
    // On the local store too, an unsigned record is not believed by a reader with a key.
    let plain = Renderer::embedded()
        .unwrap()
        .render(&cp("pr_created"))
        .unwrap();
    new.thread_raw().append(&plain).await.unwrap();
    assert_eq!(
        new.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
}

#[test]
fn the_cli_signs_with_the_key_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let store = store.display().to_string();
    let bin = Bin::new(dir.path()).env("FORGESTATE_SIGNING_KEY", "s3cret-signing-key");
    let out = bin.line(&format!(
        "--store {store} checkpoint --agent {W} --session s1 --phase clone_complete --set n=1"
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let file = std::fs::read_to_string(Path::new(&store).join("thread.jsonl")).unwrap();
    assert!(file.contains("\\nSignature: hmac-sha256 "), "{file}");
    assert!(
        !file.contains("s3cret-signing-key"),
        "the key never reaches the store"
    );
    let out = bin.line(&format!(
        "--store {store} resume --agent {W} --session s1 --json"
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["phase"], "clone_complete", "{answer}");
    // A reader with another key does not believe it.
    let other = Bin::new(dir.path()).env("FORGESTATE_SIGNING_KEY", "another signing key");
    let out = other.line(&format!(
        "--store {store} resume --agent {W} --session s1 --json"
    ));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["fresh_start"], true, "{answer}");
    assert!(
        answer["warnings"][0]
            .as_str()
            .unwrap()
            .contains("not believed"),
        "{answer}"
    );
}

#[test]
fn an_empty_or_short_signing_key_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    for (key, says) in [
        ("", "set but empty"),
        ("  ", "set but empty"),
        ("k", "1 byte(s) long"),
    ] {
        let bin = Bin::new(dir.path()).env("FORGESTATE_SIGNING_KEY", key);
        let out = bin.line(&format!(
            "--store {store} checkpoint --agent {W} --session s1 --phase clone_complete"
        ));
        assert_eq!(out.status.code(), Some(78), "{key:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{key:?}: {}", stderr(&out));
    }
    assert!(
        !Path::new(&store).join("thread.jsonl").exists(),
        "nothing was written unsigned"
    );
}

/// `checkpoint --merge` onto a record an issue writer edited: the new record carries the edited
/// data and is itself unedited, so no later `resume` warns. The merge must say so when it happens.
#[test]
fn merge_onto_an_edited_record_warns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = d.join("st");
    std::fs::create_dir_all(&st).unwrap();
    let body = "[CHECKPOINT] w\nVersion: 2.0\nPhase: a\nSession: m\n\
                Time: 2026-12-01T19:00:00.000000Z\nId: 01a23317-a9be-7021-b156-1fc2813d3333\n\n\
                State Data:\n```json\n{\"x\": 666}\n```\n";
    let line = json!({"id": 1, "author": "local", "created_at": "2026-12-01T19:00:00Z",
                      "updated_at": "2026-12-01T19:05:00Z", "body": body});
    std::fs::write(st.join("thread.jsonl"), line.to_string() + "\n").unwrap();
    let out = Bin::new(d).run(&store_args(
        d,
        &[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "m",
            "--phase",
            "b",
            "--merge",
            "--json",
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains("edited after posting"),
        "merged an edited record's data silently: {all}"
    );
}
