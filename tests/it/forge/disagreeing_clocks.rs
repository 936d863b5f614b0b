//! Disagreeing clocks (issue #18, class 7): when the forge's `Date` header runs behind the times
//! it stamps on comments (a proxy in front of it, 2 h off), ages are measured on one consistent
//! clock (a silent agent ages, none is negative) with one warning; `list --since` counts back on
//! the forge's clock, as `status` does; `doctor` does not blame this machine.

use crate::{common, fake_forge};
use std::time::Duration;

use common::cli::{Bin, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::report::StatusPolicy;
use forgestate::scan::Filter;
use serde_json::{Value, json};

const TWO_HOURS: i64 = 7200;

fn client(fake: &FakeForge, dir: &std::path::Path) -> Client<AnyThread> {
    fake_forge::client(fake, BOT_TOKEN, dir)
        .retry_budget(Duration::from_millis(300))
        .build()
        .expect("client")
}

async fn save(c: &Client<AnyThread>, agent: &str) {
    let record = Record::checkpoint(agent, "s1", "p", json!({})).unwrap();
    c.save(record).await.posted().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_date_header_behind_the_comment_times_does_not_make_a_silent_agent_alive() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, dir.path());
    save(&c, "silent").await;
    fake.age(TWO_HOURS);
    save(&c, "busy").await;
    // The proxy in front of the forge stamps Date two hours behind the forge's own times.
    fake.state().date_offset = -TWO_HOURS;
    let c = client(&fake, dir.path());
    let status = c
        .status(&Filter::default(), &StatusPolicy::default())
        .await
        .unwrap();
    let row = |agent: &str| {
        status
            .rows
            .iter()
            .find(|r| r.agent == agent)
            .unwrap_or_else(|| panic!("no row for {agent}: {:?}", status.rows))
    };
    assert!(
        row("silent").age_secs >= TWO_HOURS - 60,
        "{:?}",
        row("silent")
    );
    assert!(
        row("busy").age_secs >= 0 && row("busy").age_secs < 120,
        "{:?}",
        row("busy")
    );
    assert_ne!(
        row("silent").verdict,
        forgestate::report::Verdict::Alive,
        "{:?}",
        row("silent")
    );
    let warned: Vec<&String> = status
        .warnings
        .iter()
        .filter(|w| w.contains("Date header"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", status.warnings);
    assert!(
        warned[0].contains("1h 59m behind") || warned[0].contains("2h behind"),
        "{}",
        warned[0]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn list_since_an_age_counts_back_on_the_forges_clock() {
    let fake = FakeForge::start().await;
    session(&fake);
    // The forge's clock (Date and stamps alike) is two hours behind this machine's.
    fake.state().clock_offset = -TWO_HOURS;
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, dir.path());
    save(&c, "w").await;
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&words("list --since 30m --json"));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let records = doc["records"].as_array().map(Vec::len);
    assert_eq!(
        records,
        Some(1),
        "a record posted a moment ago: {}",
        stdout(&out)
    );
    let status = bin.run(&words("status --json"));
    let rows: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        rows["rows"][0]["age_secs"].as_i64().unwrap_or(i64::MAX) < 600,
        "{rows}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_blames_the_date_header_not_this_machine() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    save(&client(&fake, dir.path()), "w").await;
    fake.state().date_offset = -TWO_HOURS;
    let out = Bin::new(dir.path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words("doctor --json"));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&out), stderr(&out)));
    let clock = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "clock")
        .unwrap_or_else(|| panic!("no clock check: {doc}"))
        .clone();
    assert_eq!(clock["status"], "warn", "{clock}");
    let said = clock.to_string();
    assert!(said.contains("Date header"), "{said}");
    assert!(!said.contains("this machine is 7"), "{said}");
}

/// `status` through the binary over a forge whose `Date` is `date_offset` seconds off its own
/// times: the document and stderr.
fn status_with_date_off(
    fake: &FakeForge,
    dir: &std::path::Path,
    date_offset: i64,
) -> (Value, String) {
    fake.state().date_offset = date_offset;
    let out = Bin::new(dir)
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .run(&words("status --json"));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&out), stderr(&out)));
    (doc, stderr(&out))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_date_header_ahead_of_the_forges_times_does_not_mark_every_agent_stalled() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, dir.path());
    save(&c, "a").await;
    save(&c, "b").await;
    // A proxy stamps Date two hours ahead of the forge's (and this machine's) clock.
    let (doc, err) = status_with_date_off(&fake, dir.path(), TWO_HOURS);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{doc}");
    for row in rows {
        assert!(row["age_secs"].as_i64().unwrap() < 120, "{row}");
        assert_eq!(row["verdict"], "alive", "{row}");
    }
    let warned: Vec<&Value> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap_or("").contains("Date header"))
        .collect();
    assert_eq!(warned.len(), 1, "{doc}");
    let w = warned[0].as_str().unwrap();
    assert!(w.contains("ahead of this machine's clock"), "{w}");
    assert_eq!(
        err.matches("Date header").count(),
        1,
        "said once on stderr: {err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_date_behind_warning_is_said_once() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    save(&client(&fake, dir.path()), "w").await;
    let (doc, err) = status_with_date_off(&fake, dir.path(), -TWO_HOURS);
    let warned = doc["warnings"].to_string().matches("Date header").count();
    assert_eq!(warned, 1, "{doc}");
    assert_eq!(
        err.matches("Date header").count(),
        1,
        "said once on stderr: {err}"
    );
}
