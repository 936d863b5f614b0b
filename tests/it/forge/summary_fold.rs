//! The read cache's summary is folded as the read goes (issue #44: the newest record per key,
//! not the whole thread classified at once): a cold read and the warm reads after it answer
//! exactly as a read holding the whole thread, on a thread with every rule the answer follows.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, bot, client, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::{Kind, Record, Renderer};
use forgestate::scan::Filter;
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase": phase})).unwrap()
}

fn rendered(record: &Record) -> String {
    Renderer::embedded().unwrap().render(record).unwrap()
}

const PAIRS: [(&str, &str); 4] = [("w", "s"), ("w", "t"), ("v", "s"), ("w", "u")];

/// Answer `n` of [`answers`], as `Debug` text (warnings included).
async fn answer(c: &Client<AnyThread>, n: usize) -> String {
    let Some(&(agent, session)) = PAIRS.get(n / 2) else {
        // The reads that take the newest of several pairs, straight from the summary's table.
        let filter = match n - 2 * PAIRS.len() {
            0 => Filter::default(),
            1 => Filter {
                agent: Some("v".into()),
                ..Default::default()
            },
            2 => Filter {
                agent: Some("w".into()),
                ..Default::default()
            },
            _ => Filter {
                kind: Some(Kind::Health),
                ..Default::default()
            },
        };
        return format!("{:?}", c.latest(&filter).await);
    };
    if n.is_multiple_of(2) {
        return format!("{:?}", c.resume(agent, session).await);
    }
    let filter = Filter {
        agent: Some(agent.into()),
        session: Some(session.into()),
        ..Default::default()
    };
    format!("{:?}", c.latest(&filter).await)
}

/// What a reader answers: `resume` and `latest` of each pair, and `latest` of the thread.
async fn answers(c: &Client<AnyThread>) -> Vec<String> {
    let mut out = Vec::new();
    for n in 0..2 * PAIRS.len() + 4 {
        out.push(Box::pin(answer(c, n)).await);
    }
    out
}

/// A thread rotated once, with a late post to the rotated member, a fork (two records naming
/// one parent), a record posted twice (one `Id` in two comments), records of several pairs and
/// kinds, many of one key in one second and others seconds apart, and (`takeover`) a takeover:
/// a cold read through the read cache answers as a read without it, and so do the warm reads
/// after new records. Without a takeover the cold answers come from the folded summary: checked
/// to fail when the fold keeps each key's oldest record instead of its newest.
async fn folded_answers_as_the_whole_thread(takeover: bool) {
    let fake = FakeForge::start().await;
    let first = session(&fake);
    let w = tempfile::tempdir().unwrap();
    let writer = bot(&fake, w.path());
    for i in 0..30 {
        writer
            .save(cp("w", "s", &format!("step_{i}")))
            .await
            .posted()
            .unwrap();
        writer
            .save(cp("w", "t", &format!("t_step_{i}")))
            .await
            .posted()
            .unwrap();
        if i % 5 == 0 {
            let health = Record::health("v", "s", "ok", json!({"i": i}), None).unwrap();
            writer.save(health).await.posted().unwrap();
            // The records so far, seconds before the next ones.
            fake.age(7);
        }
    }
    // One record in two comments: the first counts, the copy is a duplicate.
    let twice = cp("v", "s", "posted_twice");
    fake.add_comment(first, "ca-bot", &rendered(&twice));
    fake.add_comment(first, "ca-bot", &rendered(&twice));
    // A fork of (w, u): two records name one parent.
    let root = cp("w", "u", "root");
    let root_id = root.id.clone();
    fake.add_comment(first, "ca-bot", &rendered(&root));
    for branch in ["branch_a", "branch_b"] {
        let r = cp("w", "u", branch).with_parent(root_id.clone());
        fake.add_comment(first, "ca-bot", &rendered(&r));
    }
    if takeover {
        // A takeover of (w, t) by another writer.
        Box::pin(writer.take_over("w", "t", Some("w9")))
            .await
            .unwrap();
    }

    let rotated = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let head = rotated.to.unwrap();
    fake.age(3600);
    // A late post to the rotated member by the writer whose cached number is still fresh.
    let late = writer
        .save(cp("w", "s", "late_on_the_old_issue"))
        .await
        .posted()
        .unwrap();
    let late = late.id.unwrap();
    assert!(
        fake.comments_on(first)
            .iter()
            .any(|c| c.body.contains(&late)),
        "the late post is on #{first}"
    );
    for i in 0..5 {
        // Several of one key in the newest second.
        let health = Record::health("v", "s", "ok", json!({"late": i}), None).unwrap();
        fake.add_comment(head, "ca-bot", &rendered(&health));
    }
    fake.add_comment(head, "ca-bot", &rendered(&cp("v", "s", "on_the_head")));

    let whole = {
        let dir = tempfile::tempdir().unwrap();
        client(&fake, BOT_TOKEN, dir.path())
            .build()
            .unwrap()
            .without_read_cache()
    };
    let cold_dir = tempfile::tempdir().unwrap();
    let cold = client(&fake, BOT_TOKEN, cold_dir.path()).build().unwrap();
    // Each answer asked first of a machine that never read the thread, then warm.
    let want = Box::pin(answers(&whole)).await;
    for (n, want) in want.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
        assert_eq!(&Box::pin(answer(&fresh, n)).await, want, "answer {n}, cold");
    }
    assert_eq!(
        Box::pin(answers(&cold)).await,
        want,
        "one machine, cold then warm"
    );
    let resumed = cold.resume("w", "s").await.unwrap().resume;
    assert_eq!(resumed.phase, "late_on_the_old_issue");

    // New records: the warm reads extend the folded summary.
    for phase in ["after_1", "after_2"] {
        writer.save(cp("w", "s", phase)).await.posted().unwrap();
        writer.save(cp("v", "s", phase)).await.posted().unwrap();
        let want = Box::pin(answers(&whole)).await;
        assert_eq!(Box::pin(answers(&cold)).await, want, "warm, {phase}");
    }
    assert_eq!(cold.resume("w", "s").await.unwrap().resume.phase, "after_2");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folded_summary_answers_as_the_whole_thread_does() {
    Box::pin(folded_answers_as_the_whole_thread(false)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folded_summary_answers_as_the_whole_thread_does_with_a_takeover() {
    Box::pin(folded_answers_as_the_whole_thread(true)).await;
}
