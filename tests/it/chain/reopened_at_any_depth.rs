//! Issue #42, serious 3: the head only moves forward. In chains of 2, 3 and 7 session issues,
//! a person reopens each older member, alone and two at once. Every time, a fresh machine's
//! record goes to the real head, the head is never closed, the next record closes the
//! reopened issues again without opening a new one (no fork from an old member), and every
//! session, including those that lived only on one member (ended, past `carry_days`, so no
//! rotation carried them), is still listed once by `list --all` and resumed where it was.

use crate::fake_forge::{FakeForge, bot, session};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::{Record, parse};
use serde_json::json;

fn cp(session: &str, phase: &str) -> Record {
    Record::checkpoint("a", session, phase, json!({"phase": phase})).unwrap()
}

fn fresh_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn ids_on(fake: &FakeForge, issue: u64) -> Vec<String> {
    fake.comments_on(issue)
        .iter()
        .filter_map(|c| parse(&c.body).ok()?.id)
        .collect()
}

/// A chain of `n` session issues, oldest first. Member `k` holds session `only{k}`, ended and
/// older than `carry_days` by the time of the next rotation, so it lives only there.
async fn chain_of(fake: &FakeForge, n: usize) -> Vec<u64> {
    let mut members = vec![session(fake)];
    for k in 0..n {
        let writer = bot(fake, fresh_dir().path());
        let only = format!("only{k}");
        writer
            .save(cp(&only, "clone_complete"))
            .await
            .posted()
            .unwrap();
        let end = Record::end("a", &only, "completed", None).unwrap();
        writer.save(end).await.posted().unwrap();
        if k + 1 == n {
            break;
        }
        fake.age(31 * 86_400);
        let rotated = bot(fake, fresh_dir().path()).rotate().await.unwrap();
        assert!(rotated.closed, "{rotated:?}");
        members.push(rotated.to.unwrap());
    }
    fake.age(3600); // the chain was built a while ago
    members
}

/// The sessions a fresh machine lists with the whole history, one entry per record.
async fn listed_sessions(fake: &FakeForge) -> Vec<String> {
    let scan = bot(fake, fresh_dir().path())
        .query(&forgestate::ListQuery {
            whole_history: true,
            ..Default::default()
        })
        .await
        .unwrap();
    scan.entries
        .iter()
        .filter(|e| e.record.session.starts_with("only"))
        .map(|e| e.record.session.clone())
        .collect()
}

/// Reopens `reopened` in the chain `members` and checks that the thread goes on from the head.
async fn reopen_and_write(fake: &FakeForge, members: &[u64], reopened: &[u64], step: usize) {
    let head = *members.last().unwrap();
    let issues = fake.state().issues.len();
    for &n in reopened {
        fake.set_closed(n, false); // a person reopens it
    }
    let what = format!("chain {members:?}, reopened {reopened:?}");
    let machine = bot(fake, fresh_dir().path());
    let id = machine
        .save(cp("live", &format!("step_{step}")))
        .await
        .posted()
        .unwrap()
        .id
        .unwrap();
    assert!(
        ids_on(fake, head).contains(&id),
        "{what}: written to the head"
    );
    machine.rotate_if_due().await.unwrap();
    assert_eq!(
        fake.open_issues_titled(TITLE),
        vec![head],
        "{what}: the reopened issues are closed again, the head is not"
    );
    assert_eq!(
        fake.state().issues.len(),
        issues,
        "{what}: no new session issue (nothing forked from an old member)"
    );
    let resumed = bot(fake, fresh_dir().path())
        .resume("a", "live")
        .await
        .unwrap();
    assert_eq!(resumed.resume.phase, format!("step_{step}"), "{what}");
    let mut sessions = listed_sessions(fake).await;
    sessions.sort();
    let mut want: Vec<String> = (0..members.len())
        .flat_map(|k| [format!("only{k}"), format!("only{k}")])
        .collect();
    want.sort();
    assert_eq!(sessions, want, "{what}: each record listed once");
}

async fn every_member_reopened(n: usize) {
    let fake = FakeForge::start().await;
    let members = chain_of(&fake, n).await;
    assert_eq!(members.len(), n);
    let older = &members[..n - 1];
    let mut step = 0;
    for &one in older {
        step += 1;
        reopen_and_write(&fake, &members, &[one], step).await;
    }
    for (i, &a) in older.iter().enumerate() {
        for &b in &older[i + 1..] {
            step += 1;
            reopen_and_write(&fake, &members, &[a, b], step).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chain_of_two_with_its_old_member_reopened_goes_on_from_the_head() {
    every_member_reopened(2).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chain_of_three_with_any_member_reopened_goes_on_from_the_head() {
    every_member_reopened(3).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chain_of_seven_with_any_member_or_two_reopened_goes_on_from_the_head() {
    every_member_reopened(7).await;
}
