//! Read-side holes: `resume` matches names exactly and writes refuse glob metacharacters in
//! them; `resume` and `latest` warn when a newer comment could not be read; secret-shaped header
//! values are refused rather than scrubbed. Backend-level (local store and fake forge) and
//! through the real binary.

use crate::{common, fake_forge};
use common::GHP;
use common::cli::store_args;
use common::cli::{Bin, stderr};
use fake_forge::{FakeForge, client, session};
use forgestate::format::{BuildError, FieldError, Record, Renderer};
use forgestate::scan::Filter;
use forgestate::store::Thread;
use forgestate::{Category, Client, Outcome};
use serde_json::json;

/// A rendered checkpoint body for `agent`/`session`, written as another program might: the
/// names are put in after rendering, so they skip write validation.
fn raw_body(agent: &str, session: &str, phase: &str) -> String {
    let record = Record::checkpoint("AGENTX", "SESSIONX", phase, json!({"owner": agent})).unwrap();
    Renderer::embedded()
        .unwrap()
        .render(&record)
        .unwrap()
        .replace("AGENTX", agent)
        .replace("SESSIONX", session)
}

fn body(agent: &str, phase: &str) -> String {
    Renderer::embedded()
        .unwrap()
        .render(&Record::checkpoint(agent, "s", phase, json!({"n": 1})).unwrap())
        .unwrap()
}

/// A body cut short, as a forge that truncates long comments returns it.
fn truncated(agent: &str, phase: &str) -> String {
    let full = body(agent, phase);
    let cut = full.find("\"n\"").expect("data in body");
    full[..cut].to_string()
}

#[tokio::test]
async fn resume_matches_agent_and_session_exactly_never_as_globs() {
    let dir = tempfile::tempdir().unwrap();
    let c = Client::local_as(dir.path(), "me").unwrap();
    c.thread_raw()
        .append(&raw_body("w[1]", "build-*", "mine"))
        .await
        .unwrap();
    c.thread_raw()
        .append(&raw_body("w1", "build-7", "theirs"))
        .await
        .unwrap();

    let r = c.resume("w[1]", "build-*").await.unwrap();
    assert_eq!(r.resume.phase, "mine");
    assert_eq!(r.resume.data["owner"], "w[1]");
    // A glob that matches no exact name is a usage error pointing to list and latest, never a
    // silent fresh start (writes refuse such names).
    let err = c.resume("w?", "build-7").await.unwrap_err();
    assert_eq!(err.category(), forgestate::Category::Usage, "{err}");
    assert!(err.to_string().contains("use list or latest"), "{err}");

    // Filters: a plain name is exact, a value with a metacharacter is a glob.
    let by = |agent: &str| Filter {
        agent: Some(agent.into()),
        ..Filter::default()
    };
    let phases = |s: forgestate::scan::Scan| -> Vec<String> {
        s.entries
            .iter()
            .map(|e| e.record.phase().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(phases(c.list(&by("w1"), None).await.unwrap()), ["theirs"]);
    assert_eq!(
        phases(c.list(&by("w*"), None).await.unwrap()),
        ["mine", "theirs"]
    );
    let latest = c.latest(&by("w1")).await.unwrap().record.unwrap();
    assert_eq!(latest.record.phase(), Some("theirs"));
}

#[test]
fn writes_refuse_glob_metacharacters_in_agent_and_session() {
    for (agent, session, field) in [("w[1]", "s", "agent"), ("w", "build-*", "session")] {
        let err = Record::checkpoint(agent, session, "p", json!({})).unwrap_err();
        assert!(
            matches!(err, BuildError::Field(FieldError::GlobChar { field: f, .. }) if f == field),
            "{err:?}"
        );
        assert!(err.to_string().starts_with(field), "{err}");
        assert!(Record::health(agent, session, "ok", json!({}), None).is_err());
    }
    assert!(Record::checkpoint("w", "s", "subtask_[3]_complete", json!({})).is_ok());
}

#[test]
fn the_binary_refuses_glob_and_secret_shaped_names_with_exit_65() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let bin = Bin::new(dir.path());
    let run = |line: &str| bin.line(&format!("--store {} {line}", store.display()));
    let out = run("checkpoint --agent w[1] --session s --phase p");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("agent contains '['"),
        "{}",
        stderr(&out)
    );
    let out = run("checkpoint --agent w --session AKIAIOSFODNN7EXAMPLE --phase p");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("session looks like a secret"), "{err}");
    assert!(!err.contains("AKIAIOSFODNN7EXAMPLE"), "{err}");
    let out = run("resume --agent w --session AKIAIOSFODNN7EXAMPLE --json");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("REDACTED"));
}

#[tokio::test]
async fn secret_shaped_header_values_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let c = Client::local_as(dir.path(), "me").unwrap();
    let record = Record::checkpoint("w", "AKIAIOSFODNN7EXAMPLE", "p", json!({})).unwrap();
    let Outcome::Failed(err) = c.save(record.clone()).await else {
        panic!("a secret-shaped session was accepted")
    };
    assert_eq!(err.category(), Category::Data);
    assert!(
        err.to_string().contains("session looks like a secret"),
        "{err}"
    );
    assert!(c.post(record).await.is_err());
    // Data values are still scrubbed, not refused.
    let ok = Record::checkpoint("w", "s", "p", json!({"k": "AKIAIOSFODNN7EXAMPLE"})).unwrap();
    let posted = c.save(ok).await.posted().unwrap();
    assert_eq!(posted.record.data()["k"], "[REDACTED]");
    assert_eq!(
        c.list(&Filter::default(), None)
            .await
            .unwrap()
            .entries
            .len(),
        1
    );
}

#[tokio::test]
async fn a_newer_unreadable_comment_is_warned_of_on_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let c = Client::local_as(dir.path(), "me").unwrap();
    c.thread_raw().append(&body("w", "p1")).await.unwrap();
    let r = c.resume("w", "s").await.unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    c.thread_raw().append(&truncated("w", "p2")).await.unwrap();
    let r = c.resume("w", "s").await.unwrap();
    assert_eq!(r.resume.phase, "p1");
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("newer than this answer, could not be read"));
    assert!(r.warnings[0].contains("list --invalid"));
    let l = c.latest(&Filter::default()).await.unwrap();
    assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_and_latest_warn_when_a_newer_trusted_comment_cannot_be_read() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, fake_forge::BOT_TOKEN, dir.path())
        .build()
        .unwrap();
    let old_odd = fake.add_odd_comment(n, "ca-bot", &body("w", "p0"), json!({"created_at": 17}));
    fake.add_comment(n, "ca-bot", &body("w", "p1"));
    let clean = c.resume("w", "s").await.unwrap();
    assert!(
        clean.warnings.is_empty(),
        "older odd comment: {:?}",
        clean.warnings
    );

    // Not warned of: an untrusted author's broken or odd comment, another agent's broken record,
    // a plain comment.
    fake.add_comment(n, "mallory", &truncated("w", "evil"));
    fake.add_odd_comment(n, "mallory", &body("w", "evil2"), json!({"created_at": 17}));
    fake.add_comment(n, "ca-bot", &truncated("other", "x"));
    fake.add_comment(n, "ca-bot", "just a remark");
    let r = c.resume("w", "s").await.unwrap();
    assert_eq!(r.resume.phase, "p1");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);

    let odd = fake.add_odd_comment(n, "ca-bot", &body("w", "p2"), json!({"created_at": 17}));
    let cut = fake.add_comment(n, "ca-bot", &truncated("w", "p3"));
    let r = c.resume("w", "s").await.unwrap();
    assert_eq!(r.resume.phase, "p1");
    let warned: Vec<&String> = r.warnings.iter().filter(|w| w.contains("stale")).collect();
    assert_eq!(warned.len(), 2, "{:?}", r.warnings);
    assert!(warned[0].starts_with(&format!("comment {odd}, newer than this answer")));
    assert!(warned[0].contains("(unreadable: "), "{}", warned[0]);
    assert!(warned[1].starts_with(&format!("comment {cut}, newer than this answer")));
    assert!(
        !r.warnings
            .iter()
            .any(|w| w.contains(&format!("comment {old_odd},")))
    );

    let l = c
        .latest(&Filter {
            agent: Some("w".into()),
            ..Filter::default()
        })
        .await
        .unwrap();
    assert_eq!(l.record.unwrap().record.phase(), Some("p1"));
    assert_eq!(l.warnings.iter().filter(|w| w.contains("stale")).count(), 2);
    // For another agent's answer, `w`'s broken records do not matter; the odd one (whose agent
    // cannot be told) still does.
    let other = c
        .latest(&Filter {
            agent: Some("nobody".into()),
            ..Filter::default()
        })
        .await
        .unwrap();
    let warned: Vec<&String> = other
        .warnings
        .iter()
        .filter(|w| w.contains("stale"))
        .collect();
    assert_eq!(warned.len(), 2, "{:?}", other.warnings);
    assert!(
        warned[0].starts_with(&format!("comment {old_odd},")),
        "{warned:?}"
    );
    assert!(
        warned[1].starts_with(&format!("comment {odd},")),
        "{warned:?}"
    );
}

#[test]
fn a_parent_that_holds_a_secret_is_refused_like_every_other_header() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = Bin::new(d).run(&store_args(
        d,
        &[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "s",
            "--phase",
            "p",
            "--parent",
            GHP,
        ],
    ));
    // A secret is no record id: refused as a usage error before any header is built, and the
    // message does not echo it.
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(!stderr(&out).contains(GHP), "{}", stderr(&out));
    for body in common::stored_bodies(&d.join("st")) {
        assert!(!body.contains(GHP), "the token was written: {body}");
    }
}
