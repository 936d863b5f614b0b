//! A person's edit that un-makes a record is warned of, never silently skipped: a note added
//! above a record (`marker_not_first`), and an old comment's `Id:` set to a newer record's (the
//! newer one becomes a duplicate that says something else). Through a client reading the fake
//! forge (its read cache on, warm and refreshed), as `resume` and `latest` answer.

use crate::fake_forge;

use fake_forge::{FakeForge, OPS_TOKEN, bot, session};
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::json;

const W: &str = "implementation-worker";

fn cp(agent: &str, phase: &str) -> Record {
    Record::checkpoint(agent, "s1", phase, json!({"step": phase})).unwrap()
}

/// The warnings of `warnings` that say an answer may be stale.
fn stale(warnings: &[String]) -> Vec<&String> {
    warnings
        .iter()
        .filter(|w| w.contains("may be stale"))
        .collect()
}

/// The body of comment `id` on issue `n`.
fn body_of(fake: &FakeForge, n: u64, id: u64) -> String {
    let comments = fake.comments_on(n);
    comments.into_iter().find(|k| k.id == id).unwrap().body
}

/// `warnings` say once that comment `comment`, newer than the answer, is a `code` near miss.
fn warned_once(warnings: &[String], comment: u64, code: &str) {
    let warned = stale(warnings);
    assert_eq!(warned.len(), 1, "{warnings:?}");
    let head = format!("comment {comment}, newer than");
    assert!(warned[0].starts_with(&head), "{}", warned[0]);
    assert!(warned[0].contains(&format!("({code}: ")), "{}", warned[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_note_added_above_the_newest_record_is_warned_of() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp(W, "clone_complete")).await.posted().unwrap();
    let newest = c.save(cp(W, "subtask_1_complete")).await.posted().unwrap();
    let other = c.save(cp("other-agent", "x")).await.posted().unwrap();
    assert!(c.resume(W, "s1").await.unwrap().warnings.is_empty());
    fake.age(600);

    // A person adds a note above another agent's record: not this agent's answer, no warning.
    let body = |id: u64| body_of(&fake, n, id);
    let noted = |b: String| format!("> Alice: this step was flaky, re-check it.\n\n{b}");
    let status = fake
        .edit_comment_as(OPS_TOKEN, other.comment_id, &noted(body(other.comment_id)))
        .await;
    assert_eq!(status, 200);
    let r = c.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "subtask_1_complete");
    assert!(stale(&r.warnings).is_empty(), "{:?}", r.warnings);

    // Then above this agent's newest: the answer rolls back, and says it may be stale.
    let status = fake
        .edit_comment_as(
            OPS_TOKEN,
            newest.comment_id,
            &noted(body(newest.comment_id)),
        )
        .await;
    assert_eq!(status, 200);
    for _ in 0..2 {
        // Warm, then warm again (the read cache's summary).
        let r = c.resume(W, "s1").await.unwrap();
        assert_eq!(r.resume.phase, "clone_complete");
        warned_once(&r.warnings, newest.comment_id, "marker_not_first");
    }
    let latest = c
        .latest(&Filter {
            agent: Some(W.into()),
            ..Filter::default()
        })
        .await
        .unwrap();
    assert_eq!(stale(&latest.warnings).len(), 1, "{:?}", latest.warnings);
    // A fresh machine (a cold read) says the same, and lists the comment with its reason.
    let cold = tempfile::tempdir().unwrap();
    let c2 = bot(&fake, cold.path());
    let r = c2.resume(W, "s1").await.unwrap();
    assert_eq!(stale(&r.warnings).len(), 1, "{:?}", r.warnings);
    let listed = c2.list(&Filter::default(), None).await.unwrap();
    let codes: Vec<(Option<u64>, &str)> = (listed.rejected.iter())
        .map(|r| (r.comment.id, r.code.code()))
        .collect();
    assert_eq!(
        codes,
        [
            (Some(newest.comment_id), "marker_not_first"),
            (Some(other.comment_id), "marker_not_first")
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_authors_note_above_a_record_stays_ignored() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp(W, "clone_complete")).await.posted().unwrap();
    let rendered = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&cp(W, "evil"))
        .unwrap();
    fake.add_comment(n, "mallory", &format!("Look:\n\n{rendered}"));
    let r = c.resume(W, "s1").await.unwrap();
    assert_eq!(r.resume.phase, "clone_complete");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_old_comment_given_the_newest_records_id_is_warned_of() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    let oldest = c.save(cp(W, "clone_complete")).await.posted().unwrap();
    c.save(cp(W, "subtask_1_complete")).await.posted().unwrap();
    let newest = c.save(cp(W, "subtask_2_complete")).await.posted().unwrap();
    assert!(c.resume(W, "s1").await.unwrap().warnings.is_empty());
    fake.age(600);

    // A person sets the oldest comment's `Id:` to the newest record's.
    let bodies = fake.comments_on(n);
    let id_line = |b: &str| {
        b.lines()
            .find(|l| l.starts_with("Id: "))
            .unwrap()
            .to_string()
    };
    let edited = bodies[0]
        .body
        .replace(&id_line(&bodies[0].body), &id_line(&bodies[2].body));
    assert_ne!(edited, bodies[0].body);
    let status = fake
        .edit_comment_as(OPS_TOKEN, oldest.comment_id, &edited)
        .await;
    assert_eq!(status, 200);

    let cold = tempfile::tempdir().unwrap();
    let c2 = bot(&fake, cold.path());
    // Warm, warm again (the read cache's summary), and a fresh machine's cold read.
    for client in [&c, &c, &c2, &c2] {
        let r = client.resume(W, "s1").await.unwrap();
        assert_eq!(r.resume.phase, "subtask_1_complete");
        let both = format!(
            "comment {} and comment {} (checkpoint {W}) both hold record ",
            oldest.comment_id, newest.comment_id
        );
        assert_eq!(
            r.warnings.iter().filter(|w| w.starts_with(&both)).count(),
            1,
            "{:?}",
            r.warnings
        );
        warned_once(&r.warnings, newest.comment_id, "id_conflict");
    }
    // Another agent's answer is not stale for it (the warning naming both comments stays).
    let other = c.resume("other-agent", "s1").await.unwrap();
    assert!(stale(&other.warnings).is_empty(), "{:?}", other.warnings);
    let listed = c2.list(&Filter::default(), None).await.unwrap();
    let codes: Vec<&str> = listed.rejected.iter().map(|r| r.code.code()).collect();
    assert_eq!(codes, ["id_conflict"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_posted_twice_stays_silent() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp(W, "clone_complete")).await.posted().unwrap();
    c.save(cp(W, "subtask_1_complete")).await.posted().unwrap();
    // The outbox posts the newest record again (its first answer was lost).
    let again = fake.comments_on(n)[1].body.clone();
    fake.add_comment(n, "ca-bot", &again);
    for _ in 0..2 {
        let r = c.resume(W, "s1").await.unwrap();
        assert_eq!(r.resume.phase, "subtask_1_complete");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }
    let listed = c.list(&Filter::default(), None).await.unwrap();
    let codes: Vec<&str> = listed.rejected.iter().map(|r| r.code.code()).collect();
    assert_eq!(codes, ["duplicate"]);
    assert!(listed.warnings.is_empty(), "{:?}", listed.warnings);
}

/// A person's edit that indents the newest record's marker line (two spaces, or the no-break
/// space a web editor may leave): not read, as before, but warned of (hatk6), on a warm read and
/// on a machine that never read the thread.
#[tokio::test(flavor = "multi_thread")]
async fn an_indented_marker_line_on_the_newest_record_is_warned_of() {
    for indent in ["  ", "\u{a0}"] {
        let fake = FakeForge::start().await;
        let n = session(&fake);
        let dir = tempfile::tempdir().unwrap();
        let c = bot(&fake, dir.path());
        c.save(cp(W, "clone_complete")).await.posted().unwrap();
        let newest = c.save(cp(W, "subtask_1_complete")).await.posted().unwrap();
        assert!(c.resume(W, "s1").await.unwrap().warnings.is_empty());
        fake.age(600);
        let body = body_of(&fake, n, newest.comment_id);
        let edited = format!("{indent}{body}");
        let status = fake
            .edit_comment_as(OPS_TOKEN, newest.comment_id, &edited)
            .await;
        assert_eq!(status, 200);
        let fresh = tempfile::tempdir().unwrap();
        for r in [
            c.resume(W, "s1").await.unwrap(),
            bot(&fake, fresh.path()).resume(W, "s1").await.unwrap(),
        ] {
            assert_eq!(r.resume.phase, "clone_complete");
            warned_once(&r.warnings, newest.comment_id, "marker_not_first");
        }
    }
}
