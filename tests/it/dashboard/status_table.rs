//! `status --publish` on the fake forge: the status table in the session issue's body, a
//! person's text around it kept byte for byte, unchanged tables not written, two publishers
//! converging, rotation carrying the table, and the automatic refresh at most once per interval.
//! A marker a person quotes (code span, fence, indented block, `>` quote) is not the table's.

use crate::fake_forge;
use std::time::Duration;

use crate::fake_forge::bot;
use fake_forge::{FakeForge, session};
use forgestate::config::DashboardSettings;
use forgestate::defaults::{LABEL, TITLE};
use forgestate::format::Record;
use forgestate::report::{StatusPolicy, dashboard};
use forgestate::{Category, Client};
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase_was": phase})).unwrap()
}

/// How many body edits (`PATCH` of the issue itself) the fake received for issue `n`.
async fn body_writes(fake: &FakeForge, n: u64) -> usize {
    let path = format!("/issues/{n}");
    fake.requests()
        .await
        .iter()
        .filter(|r| r.method.as_str() == "PATCH" && r.url.path().ends_with(&path))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_table_is_published_keeps_a_persons_text_and_skips_unchanged_writes() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    let mut handoff = cp("implementation-worker", "s1", "clone_complete");
    handoff.next = Some("write the tests".into());
    handoff.blockers = vec!["waiting on | review".into()];
    c.save(handoff).await.posted().unwrap();
    c.save(cp("planner", "s2", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let intro = "Hello team: **do not** close this.\r\n\r\nTrailing  \n";
    fake.edit_issue_body(n, intro);

    let policy = StatusPolicy::default();
    let first = c.publish_status(&policy).await.unwrap();
    assert!(first.written);
    assert_eq!((first.issue, first.rows), (n, 2));
    let body = fake.issue_body(n);
    assert!(
        body.starts_with(dashboard::BEGIN) && body.ends_with(&format!("\n\n{intro}")),
        "a first publish puts the table at the top, the person's text kept below: {body:?}"
    );
    assert_eq!(dashboard::current(&body), Some(first.table.as_str()));
    for cell in [
        "| implementation-worker | s1 |  | alive | clone_complete | phase_2_subtasks |",
        "| write the tests | waiting on \\| review |",
        "| planner | s2 |  | alive | subtask_1_complete |",
    ] {
        assert!(body.contains(cell), "{cell} in\n{body}");
    }
    assert_eq!(body_writes(&fake, n).await, 1);

    // Unchanged: read, not written.
    let again = c.publish_status(&policy).await.unwrap();
    assert!(!again.written);
    assert_eq!(
        body_writes(&fake, n).await,
        1,
        "an unchanged table is not written"
    );

    // A person adds text after the table; the next change keeps it, byte for byte.
    let outro = "\n\nNotes after the table, by a person.\t\n";
    fake.edit_issue_body(n, &format!("{body}{outro}"));
    c.save(cp("planner", "s2", "subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    let third = c.publish_status(&policy).await.unwrap();
    assert!(third.written);
    let body = fake.issue_body(n);
    assert!(
        body.starts_with(dashboard::BEGIN) && body.contains(intro) && body.ends_with(outro),
        "{body:?}"
    );
    let (table, timeline) = body
        .split_once("### Phases in the last day")
        .expect("the timeline under the table");
    assert!(table.contains("subtask_2_complete") && !table.contains("subtask_1_complete"));
    assert!(
        timeline.contains("```mermaid\ngantt\n")
            && timeline.contains("    section planner · s2\n")
            && timeline.contains("    subtask_1_complete :")
            && timeline.contains("    subtask_2_complete :"),
        "each phase of the day is a bar: {timeline}"
    );
    assert!(
        timeline.contains(dashboard::END),
        "between the same markers"
    );
    assert_eq!(body.matches(dashboard::END).count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn markers_a_person_quotes_are_kept_with_the_chain_link_and_the_text_after() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let old = fake.add_issue(TITLE, &[label], true);
    let n = fake.add_issue(TITLE, &[label], false);
    let (begin, end) = (dashboard::BEGIN, dashboard::END);
    let person = format!(
        "Previous session issue: #{old}\n\n\
         How to read this: the table goes between `{begin}` and `{end}`.\n\n\
         ```\n{begin}\nexample\n{end}\n```\n\n\
         \x20   {begin}\n    {end}\n\n\
         > {begin}\n> quoted\n> {end}\n\n\
         Text after the notes, by a person.\n"
    );
    fake.edit_issue_body(n, &person);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp("a", "s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    let policy = StatusPolicy::default();
    let first = c.publish_status(&policy).await.unwrap();
    assert_eq!((first.issue, first.written), (n, true));
    let body = fake.issue_body(n);
    assert_eq!(body, format!("{}\n\n{person}", first.table), "at the top");

    // The next change replaces only the real table.
    c.save(cp("a", "s1", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let second = c.publish_status(&policy).await.unwrap();
    assert!(second.written && second.table.contains("subtask_1_complete"));
    assert_eq!(fake.issue_body(n), format!("{}\n\n{person}", second.table));
    assert!(!c.publish_status(&policy).await.unwrap().written);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_publishers_converge_on_one_table() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (bot(&fake, d1.path()), bot(&fake, d2.path()));
    a.save(cp("a", "s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    b.save(cp("b", "s2", "clone_complete"))
        .await
        .posted()
        .unwrap();
    fake.edit_issue_body(n, "Kept by a person.\n");
    let policy = StatusPolicy::default();
    for _ in 0..5 {
        let (x, y) = tokio::join!(a.publish_status(&policy), b.publish_status(&policy));
        let (x, y) = (x.unwrap(), y.unwrap());
        assert_eq!(x.table, y.table, "both computed the same table");
    }
    let body = fake.issue_body(n);
    assert!(body.ends_with("\n\nKept by a person.\n"), "{body:?}");
    assert_eq!(
        body.matches("<!-- forgestate:status:begin").count(),
        1,
        "{body}"
    );
    assert_eq!(body.matches(dashboard::END).count(), 1, "{body}");
    // Converged: neither has anything left to write.
    assert!(!a.publish_status(&policy).await.unwrap().written);
    assert!(!b.publish_status(&policy).await.unwrap().written);
}

#[tokio::test(flavor = "multi_thread")]
async fn rotation_carries_the_table_and_the_old_body_says_where_it_continues() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp("a", "s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    fake.edit_issue_body(n, "A person's note.\n");
    c.publish_status(&StatusPolicy::default()).await.unwrap();
    let rotation = c.rotate().await.unwrap();
    let to = rotation.to.unwrap();
    assert!(rotation.dashboard && rotation.closed, "{rotation:?}");
    let old = fake.issue_body(n);
    assert!(old.ends_with("\n\nA person's note.\n"), "{old:?}");
    assert!(
        dashboard::current(&old)
            .unwrap()
            .contains(&format!("This session continues in #{to}")),
        "{old}"
    );
    assert!(!old.contains("| a | s1 |"), "the old table is gone: {old}");
    let new = fake.issue_body(to);
    assert!(
        new.starts_with(dashboard::BEGIN) && new.contains("\n\nPrevious session issue: #"),
        "the carried table at the top, the chain link below it: {new}"
    );
    assert!(
        new.contains("| a | s1 |  | alive | clone_complete |"),
        "{new}"
    );
    // Publishing again goes to the new head and finds nothing to change.
    let again = c.publish_status(&StatusPolicy::default()).await.unwrap();
    assert_eq!((again.issue, again.written), (to, false));
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_refresh_runs_at_most_once_per_interval_per_machine() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let auto = |every| DashboardSettings {
        auto: true,
        every,
        policy: StatusPolicy::default(),
    };
    let c = bot(&fake, dir.path()).with_dashboard(auto(Duration::from_secs(300)));
    let posted = c
        .save(cp("a", "s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    assert_eq!(posted.dashboard_failed, None);
    assert!(
        fake.issue_body(n)
            .contains("| a | s1 |  | alive | clone_complete |")
    );
    c.save(cp("a", "s1", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let body = fake.issue_body(n);
    assert!(
        body.contains("clone_complete") && !body.contains("subtask_1_complete"),
        "refreshed again within the interval: {body}"
    );
    assert_eq!(body_writes(&fake, n).await, 1);
    // Another machine (its own cache directory) refreshes on its own schedule.
    let other = tempfile::tempdir().unwrap();
    let c2 = bot(&fake, other.path()).with_dashboard(auto(Duration::from_secs(300)));
    c2.save(cp("b", "s2", "clone_complete"))
        .await
        .posted()
        .unwrap();
    let body = fake.issue_body(n);
    assert!(
        body.contains("subtask_1_complete") && body.contains("| b | s2 |"),
        "{body}"
    );
    // With no interval, every record refreshes it.
    let c3 = bot(&fake, dir.path()).with_dashboard(auto(Duration::ZERO));
    c3.save(cp("a", "s1", "subtask_2_complete"))
        .await
        .posted()
        .unwrap();
    assert!(fake.issue_body(n).contains("subtask_2_complete"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_store_has_no_body_to_publish_to() {
    let dir = tempfile::tempdir().unwrap();
    let c = Client::local_as(dir.path(), "me").unwrap();
    c.save(cp("a", "s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    let e = c
        .publish_status(&StatusPolicy::default())
        .await
        .unwrap_err();
    assert_eq!(e.category(), Category::Config, "{e}");
    assert!(e.to_string().contains("local store"), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_table_whose_end_marker_a_person_deleted_is_replaced_on_the_next_publish() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    let policy = StatusPolicy::default();
    c.save(cp("a", "s1", "clone_complete"))
        .await
        .posted()
        .unwrap();
    c.publish_status(&policy).await.unwrap();
    let cut = fake.issue_body(n).replace(dashboard::END, "");
    fake.edit_issue_body(n, &format!("{cut}\nA person's note below.\n"));

    c.save(cp("a", "s1", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let second = c.publish_status(&policy).await.unwrap();
    assert!(second.written);
    let body = fake.issue_body(n);
    assert_eq!(body.matches(dashboard::BEGIN).count(), 1, "{body}");
    assert_eq!(body.matches(dashboard::END).count(), 1, "{body}");
    assert!(
        !body.contains("| clone_complete |"),
        "the old table stays: {body}"
    );
    assert!(body.contains("A person's note below."), "{body}");
}
