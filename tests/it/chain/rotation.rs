//! Rotation on the fake forge: what is carried and what is not, a rerun after an interruption at
//! each step, racing rotations, reads while both issues are open and after, and automatic
//! rotation (which costs no request while it is not due, and none at all when it is off).

use crate::fake_forge;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::fake_forge::bot;
use fake_forge::{BOT_TOKEN, FakeForge, Fault, MALLORY_TOKEN, client, session};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::{Record, parse};
use forgestate::{Client, Rotation};
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase_was": phase})).unwrap()
}

/// The session issue `n` holding: `old/s0` (ended 40 days ago), then `a/s1` (two
/// checkpoints and a health), `b/s2` (one checkpoint), and a checkpoint for `a/s1` posted by
/// mallory, who is not trusted. Returns the ids of the records a rotation must carry.
async fn busy_thread(fake: &FakeForge, dir: &Path) -> (u64, Vec<String>) {
    let n = session(fake);
    let c = bot(fake, dir);
    fake.state().clock_offset = -40 * 86_400;
    c.save(cp("old", "s0", "clone_complete"))
        .await
        .posted()
        .unwrap();
    // Finished: an unfinished session is carried whatever its age (issue #27).
    c.save(Record::end("old", "s0", "completed", None).unwrap())
        .await
        .posted()
        .unwrap();
    fake.state().clock_offset = 0;
    let mut carry = Vec::new();
    c.save(cp("a", "s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    let health = Record::health("a", "s1", "Active", json!({"n": 1}), None).unwrap();
    carry.push(c.save(health).await.posted().unwrap().id.unwrap());
    for (agent, sess, phase) in [("a", "s1", "subtasks_complete"), ("b", "s2", "pr_created")] {
        let p = c.save(cp(agent, sess, phase)).await.posted().unwrap();
        carry.push(p.id.unwrap());
    }
    // A seed agent's version-1.0 checkpoint (no `Id`), posted with the bot's token.
    fake.add_comment(n, "ca-bot", SEED_BODY);
    let mallory = client(fake, MALLORY_TOKEN, &dir.join("m")).build().unwrap();
    mallory
        .post(cp("a", "s1", "phase_evil"))
        .await
        .expect("mallory can comment");
    (n, carry)
}

/// A checkpoint as the seed's Python agents write it: version 1.0, no `Id`, unclosed fence.
const SEED_BODY: &str = "[CHECKPOINT] seed-agent\nVersion: 1.0\nPhase: clone_complete\n\
    Session: s9\nTime: 2026-11-29T08:40:58.123456Z\n\nState Data:\n```json\n{\n  \"k\": 1\n}\n\n\
    ---\n\nAutomated by CleverAgents Bot Agent: seed-agent\n";

/// The record ids on issue `n`, with how often each appears.
fn ids_on(fake: &FakeForge, n: u64) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for c in fake.comments_on(n) {
        if let Ok(Record { id: Some(id), .. }) = parse(&c.body) {
            *ids.entry(id).or_default() += 1;
        }
    }
    ids
}

fn is_closed(fake: &FakeForge, n: u64) -> bool {
    fake.state()
        .issues
        .iter()
        .any(|i| i.number == n && i.closed)
}

fn notes_on(fake: &FakeForge, n: u64) -> usize {
    fake.comments_on(n)
        .iter()
        .filter(|c| c.body.starts_with("Rotated: "))
        .count()
}

/// The rotation's end state: one open session issue (`new`, linking `old`), every record to
/// carry exactly once on it, `seeds` copies of the seed's record and nothing else, and `old`
/// closed with one note.
fn assert_rotated(fake: &FakeForge, old: u64, carry: &[String], seeds: usize) -> u64 {
    let open = fake.open_issues_titled(TITLE);
    assert_eq!(open.len(), 1, "one open session issue: {open:?}");
    let new = open[0];
    assert!(new > old);
    let body = fake
        .state()
        .issues
        .iter()
        .find(|i| i.number == new)
        .map(|i| i.body.clone())
        .unwrap();
    assert!(
        body.starts_with(&format!("Previous session issue: #{old}\n")),
        "{body}"
    );
    let ids = ids_on(fake, new);
    for id in carry {
        assert_eq!(ids.get(id), Some(&1), "record {id} carried exactly once");
    }
    assert_eq!(ids.len(), carry.len(), "nothing else carried: {ids:?}");
    let seed_copies = fake
        .comments_on(new)
        .iter()
        .filter(|c| parse(&c.body).is_ok_and(|r| r.agent == "seed-agent"))
        .count();
    assert_eq!(seed_copies, seeds, "the seed's record carried exactly once");
    assert_eq!(fake.comments_on(new).len(), carry.len() + seeds);
    for c in fake.comments_on(new) {
        assert_eq!(parse(&c.body).unwrap().carried_from, Some(old));
    }
    assert!(is_closed(fake, old), "old issue closed");
    assert_eq!(notes_on(fake, old), 1, "one closing note");
    new
}

#[tokio::test]
async fn rotation_carries_the_newest_records_of_active_sessions_and_closes_the_old_issue() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (old, carry) = busy_thread(&fake, dir.path()).await;
    let report = bot(&fake, dir.path()).rotate().await.unwrap();
    let new = assert_rotated(&fake, old, &carry, 1);
    assert_eq!(
        report,
        Rotation {
            from: old,
            from_url: report.from_url.clone(),
            to: Some(new),
            to_url: report.to_url.clone(),
            created: true,
            carried: 4,
            already_carried: 0,
            skipped: Vec::new(),
            closed: true,
            note: None,
            dashboard: false,
        }
    );
    let note = &fake.comments_on(old)[fake.comments_on(old).len() - 1].body;
    assert!(note.starts_with(&format!("Rotated: this session continues in #{new} (")));

    // A machine that never saw the rotation reads the new issue.
    let fresh = tempfile::tempdir().unwrap();
    let reader = bot(&fake, fresh.path());
    let carried = reader.resume("a", "s1").await.unwrap();
    assert_eq!(carried.resume.phase, "subtasks_complete");
    let entry = carried.resume.checkpoint.as_ref().unwrap();
    // Posted within the margin before the new issue was created, the original is merged and
    // comes first in thread order; its carried copy (same `Id`) is counted once.
    assert_eq!(entry.comment.issue, Some(old));
    assert_eq!(entry.record.id.as_deref(), Some(carry[1].as_str()));
    assert!(carried.warnings.is_empty(), "{:?}", carried.warnings);
    // The session that was not carried is found through the link, with a warning.
    let stale = reader.resume("old", "s0").await.unwrap();
    assert_eq!(stale.resume.phase, "clone_complete");
    assert!(
        stale
            .warnings
            .iter()
            .any(|w| w.contains(&format!("previous session issue #{old} (closed)"))),
        "{:?}",
        stale.warnings
    );

    // Done is done: a rerun finds only carried records and changes nothing.
    let again = bot(&fake, dir.path()).rotate().await.unwrap();
    assert_eq!(again.to, None);
    assert!(again.note.unwrap().contains("nothing to rotate"));
    assert_rotated(&fake, old, &carry, 1);
}

/// The issue number the fake gives the next issue.
fn next_number(fake: &FakeForge) -> u64 {
    fake.state().last_number + 1
}

#[tokio::test]
async fn a_rotation_interrupted_after_any_step_is_finished_by_a_rerun() {
    type Inject = fn(&FakeForge, u64, u64);
    let steps: [(&str, Inject); 5] = [
        ("creating the new issue", |f, _, _| {
            f.inject("/issues", Fault::Status(403))
        }),
        ("carrying the first record", |f, _, new| {
            f.inject(&format!("/issues/{new}/comments"), Fault::Status(403))
        }),
        ("carrying the second record", |f, _, new| {
            let path = format!("/issues/{new}/comments");
            f.inject(&path, Fault::Pass);
            f.inject(&path, Fault::Status(403));
        }),
        ("noting the new issue on the old one", |f, old, _| {
            f.inject(&format!("/issues/{old}/comments"), Fault::Status(403))
        }),
        ("closing the old issue", |f, old, _| {
            f.inject(&format!("/issues/{old}"), Fault::Status(403))
        }),
    ];
    for (step, inject) in steps {
        let fake = FakeForge::start().await;
        let dir = tempfile::tempdir().unwrap();
        let (old, carry) = busy_thread(&fake, dir.path()).await;
        inject(&fake, old, next_number(&fake));
        let failed = bot(&fake, dir.path()).rotate().await;
        assert!(failed.is_err(), "{step}: the injected failure stops it");
        assert!(fake.state().faults.is_empty(), "{step}: the fault was hit");
        assert!(!is_closed(&fake, old), "{step}: old issue still open");
        let rerun = bot(&fake, dir.path()).rotate().await.unwrap();
        assert!(rerun.closed, "{step}");
        assert_rotated(&fake, old, &carry, 1);
    }
}

#[tokio::test]
async fn two_concurrent_rotations_leave_one_open_issue() {
    let fake = FakeForge::start().await;
    fake.state().latency = Duration::from_millis(5);
    let dir = tempfile::tempdir().unwrap();
    let (old, carry) = busy_thread(&fake, dir.path()).await;
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (c1, c2) = (bot(&fake, one.path()), bot(&fake, two.path()));
    let (r1, r2) = tokio::join!(c1.rotate(), c2.rotate());
    let (r1, r2) = (r1.unwrap(), r2.unwrap());
    let open = fake.open_issues_titled(TITLE);
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(r1.to, Some(open[0]));
    assert_eq!(r2.to, Some(open[0]));
    assert!(is_closed(&fake, old));
    // Both may have carried before seeing the other's posts; readers count each `Id` once.
    let ids = ids_on(&fake, open[0]);
    for id in &carry {
        assert!(ids.contains_key(id), "{id} carried");
    }
    let fresh = tempfile::tempdir().unwrap();
    let resumed = bot(&fake, fresh.path()).resume("b", "s2").await.unwrap();
    assert_eq!(resumed.resume.phase, "pr_created");
}

#[tokio::test]
async fn a_rotation_that_loses_the_creation_race_closes_its_duplicate_and_a_rerun_finishes() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (old, carry) = busy_thread(&fake, dir.path()).await;
    let racer = next_number(&fake);
    // A concurrent rotation creates its successor just before ours.
    fake.inject("/issues", Fault::Twice);
    let lost = bot(&fake, dir.path()).rotate().await.unwrap();
    assert_eq!(lost.to, Some(racer));
    assert!(!lost.created && !lost.closed);
    assert!(lost.note.unwrap().contains("concurrent rotation"));
    assert!(is_closed(&fake, racer + 1), "our duplicate is closed");
    // The racer never finished (it crashed, say): its successor is left to it for a minute
    // (issue #42: one carrier at a time), then a rerun completes its rotation.
    let left = bot(&fake, dir.path()).rotate().await.unwrap();
    assert!(!left.closed && left.carried == 0, "{left:?}");
    fake.age(61);
    bot(&fake, dir.path()).rotate().await.unwrap();
    assert_eq!(assert_rotated(&fake, old, &carry, 1), racer);
}

#[tokio::test]
async fn resume_answers_the_same_while_both_issues_are_open_and_after() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (old, carry) = busy_thread(&fake, dir.path()).await;
    fake.inject(&format!("/issues/{old}/comments"), Fault::Status(403));
    assert!(bot(&fake, dir.path()).rotate().await.is_err());
    assert_eq!(fake.open_issues_titled(TITLE).len(), 2, "both open");
    let ask = |name: &'static str| {
        let fake = &fake;
        async move {
            let fresh = tempfile::tempdir().unwrap();
            let r = bot(fake, fresh.path()).resume("a", name).await.unwrap();
            let entry = r.resume.checkpoint.unwrap();
            (r.resume.phase, entry.record.id, entry.record.carried_from)
        }
    };
    // While both are open, readers use the new issue (it continues the old one) and merge the
    // old one's records posted since shortly before the new one was created.
    let during = ask("s1").await;
    assert_eq!(
        during,
        ("subtasks_complete".into(), Some(carry[1].clone()), None)
    );
    bot(&fake, dir.path()).rotate().await.unwrap();
    let after = ask("s1").await;
    assert_eq!(after, during, "the same answer after the rotation finished");
}

#[tokio::test]
async fn automatic_rotation_waits_for_the_limit_and_costs_no_request_until_then() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    // Re-check the issue before every write, so every write learns the comment count.
    let c = client(&fake, BOT_TOKEN, dir.path())
        .rotate_after(3)
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap();
    for phase in ["p1", "p2", "p3", "p4"] {
        c.save(cp("a", "s1", phase)).await.posted().unwrap();
        let before = fake.requests().await.len();
        assert_eq!(c.rotate_if_due().await.unwrap(), None, "{phase}");
        assert_eq!(
            fake.requests().await.len(),
            before,
            "no request when not due"
        );
    }
    // The write before this one saw 4 comments: over the limit, so the save itself rotated.
    let last = c.save(cp("a", "s1", "p5")).await.posted().unwrap();
    let report = last.rotation.clone().expect("rotated by the save");
    assert_eq!(last.rotation_failed, None);
    assert_eq!(c.rotate_if_due().await.unwrap(), None, "nothing left to do");
    assert!(report.closed);
    assert_eq!(report.carried, 1);
    let new = assert_rotated(&fake, old, &[last.id.unwrap()], 0);
    // The next write goes to the new issue, which is under the limit.
    c.save(cp("a", "s1", "p6")).await.posted().unwrap();
    assert_eq!(fake.comments_on(new).len(), 2);
    assert_eq!(c.rotate_if_due().await.unwrap(), None);
}

/// A library user gets automatic rotation from `Client::save` alone: no CLI, no MCP server,
/// no call to `rotate_if_due`.
#[tokio::test]
async fn client_save_alone_rotates_the_session_issue_when_it_is_due() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .rotate_after(2)
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap();
    let mut rotations = Vec::new();
    let mut last_ids = HashMap::new();
    for (agent, phase) in [("a", "p1"), ("b", "p1"), ("a", "p2"), ("b", "p2")] {
        let posted = c.save(cp(agent, "s1", phase)).await.posted().unwrap();
        assert_eq!(posted.rotation_failed, None, "{agent} {phase}");
        last_ids.insert(agent, posted.id.clone().unwrap());
        if let Some(r) = posted.rotation {
            rotations.push((agent, phase, r));
        }
    }
    // The fourth save found 3 comments on the issue (over 2) before posting: after posting, it
    // rotated, carrying the newest checkpoint of each (agent, session).
    assert_eq!(rotations.len(), 1, "{rotations:?}");
    let (agent, phase, r) = &rotations[0];
    assert_eq!((*agent, *phase), ("b", "p2"));
    assert_eq!(r.from, old);
    assert!(r.closed && r.created, "{r:?}");
    assert_eq!(r.carried, 2, "{r:?}");
    assert!(is_closed(&fake, old));
    let new = r.to.expect("a successor");
    let on_new = ids_on(&fake, new);
    for id in last_ids.values() {
        assert_eq!(on_new.get(id), Some(&1), "{id} carried once: {on_new:?}");
    }
    // The next save goes to the new issue, and resume reads it there.
    let next = c.save(cp("a", "s1", "p3")).await.posted().unwrap();
    assert_eq!(next.rotation, None);
    assert_eq!(ids_on(&fake, new).get(next.id.as_ref().unwrap()), Some(&1));
    let resumed = c.resume("a", "s1").await.unwrap().resume;
    assert_eq!(resumed.phase, "p3");
}

#[tokio::test]
async fn with_rotation_off_nothing_rotates_and_nothing_is_asked() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path())
        .rotate_after(0)
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap();
    for i in 0..4 {
        c.save(cp("a", "s1", &format!("p{i}")))
            .await
            .posted()
            .unwrap();
        let before = fake.requests().await.len();
        assert_eq!(c.rotate_if_due().await.unwrap(), None);
        assert_eq!(fake.requests().await.len(), before);
    }
    assert_eq!(fake.open_issues_titled(TITLE), vec![n]);
}

#[tokio::test]
async fn the_local_store_is_never_rotated() {
    let dir = tempfile::tempdir().unwrap();
    let c = Client::local(dir.path()).unwrap();
    let err = c.rotate().await.unwrap_err();
    assert_eq!(err.category(), forgestate::Category::Config);
    assert!(err.to_string().contains("never rotated"), "{err}");
    assert_eq!(c.rotate_if_due().await.unwrap(), None);
}

#[test]
fn the_carried_from_header_reads_back_and_is_checked() {
    let record = cp("a", "s1", "p").carried(12);
    let body = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&record)
        .unwrap();
    let back = parse(&body).unwrap();
    assert_eq!(back.carried_from, Some(12));
    assert_eq!(back.id, record.id, "a carried record keeps its Id");
    let json = serde_json::to_value(&back).unwrap();
    assert_eq!(json["carried_from"], 12);
    // Not carried: no header, and no key in the JSON.
    let plain = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&cp("a", "s1", "p"))
        .unwrap();
    assert!(!plain.contains("Carried-From"), "{plain}");
    assert!(
        serde_json::to_value(parse(&plain).unwrap())
            .unwrap()
            .get("carried_from")
            .is_none()
    );
    for bad in ["12", "#x", "#-1"] {
        let edited = body.replace("Carried-From: #12", &format!("Carried-From: {bad}"));
        let err = parse(&edited).unwrap_err();
        assert_eq!(err.code(), "bad_field", "{bad}: {err}");
    }
}
