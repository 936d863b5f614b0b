//! Records named by id: `checkpoint --id` posts under an id the caller chose (a LangGraph
//! checkpoint id), and `prune --id` deletes exactly the records named, newest included, on both
//! backends, only the identity's own.

use crate::{common, fake_forge};
use std::path::Path;

use common::cli::{Bin, guarded_json, parse_ok, run_guarded, stderr, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::format::{Record, Renderer};
use serde_json::{Value, json};

const A: &str = "1f1ef4b6-3414-6402-bfff-00943e2a2922";
const B: &str = "1f1ef4b6-341e-60c3-8000-5d42bca6eb76";

fn phases(list: &Value) -> Vec<String> {
    list["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["phase"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn checkpoint_id_names_the_record_and_a_bad_one_is_refused_unechoed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let saved = guarded_json(
        d,
        &format!("checkpoint --agent w --session s --phase p --id {A}"),
    );
    assert_eq!(saved["id"], A);
    let resume = guarded_json(d, "resume --agent w --session s");
    assert_eq!(resume["latest_id"], A, "{resume}");
    let next = guarded_json(
        d,
        &format!("checkpoint --agent w --session s --phase q --id {B}"),
    );
    assert_eq!(next["record"]["parent"], A, "lineage still follows: {next}");

    let out = run_guarded(
        d,
        "checkpoint --agent w --session s --phase r --id hunter2-secret",
    );
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a record id"), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("hunter2"),
        "never echoed: {}",
        stderr(&out)
    );
    assert_eq!(
        phases(&guarded_json(d, "list")),
        ["p", "q"],
        "nothing posted"
    );
}

#[test]
fn local_prune_by_id_deletes_exactly_those_the_newest_included() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    guarded_json(
        d,
        &format!("checkpoint --agent w --session s --phase p1 --id {A}"),
    );
    guarded_json(d, "checkpoint --agent w --session s --phase p2");
    let newest = guarded_json(
        d,
        &format!("checkpoint --agent w --session s --phase p3 --id {B}"),
    );

    let dry = guarded_json(d, &format!("prune --id {A} --id {B}"));
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["delete"].as_array().unwrap().len(), 2, "{dry}");
    assert_eq!(
        phases(&guarded_json(d, "list")).len(),
        3,
        "a dry run deletes nothing"
    );

    let done = guarded_json(d, &format!("prune --id {A} --id {B} --yes"));
    assert_eq!(done["deleted"].as_array().unwrap().len(), 2, "{done}");
    assert_eq!(phases(&guarded_json(d, "list")), ["p2"]);
    let resume = guarded_json(d, "resume --agent w --session s");
    assert_eq!(
        resume["phase"], "p2",
        "the deleted newest is gone: {resume}"
    );
    // The newest comment's id is never handed out again.
    let after = guarded_json(d, "checkpoint --agent w --session s --phase p4");
    assert!(
        after["comment_id"].as_u64() > newest["comment_id"].as_u64(),
        "{after} after {newest}"
    );
    let out = run_guarded(d, "prune --id not-an-id --yes");
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
}

fn forge(fake: &FakeForge, dir: &Path, line: &str) -> Value {
    let out = Bin::new(dir)
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .dirs()
        .line(line);
    parse_ok(&words(line), &out)
}

fn body(agent: &str, phase: &str, id: &str) -> String {
    let mut record = Record::checkpoint(agent, "s", phase, json!({})).unwrap();
    record.id = Some(id.to_string());
    Renderer::embedded().unwrap().render(&record).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn forge_prune_by_id_deletes_only_the_bots_records_named() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Another trusted-looking author's record with an id we name: never ours to delete.
    let theirs = fake.add_comment(n, "mallory", &body("w", "forged", A));
    let first = forge(
        &fake,
        d,
        &format!("checkpoint --agent w --session s --phase p1 --id {B} --json"),
    );
    let second = forge(
        &fake,
        d,
        "checkpoint --agent w --session s --phase p2 --json",
    );
    let second_id = second["id"].as_str().unwrap().to_string();

    let done = forge(
        &fake,
        d,
        &format!("prune --id {B} --id {second_id} --id {A} --yes --json"),
    );
    let deleted: Vec<u64> = done["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(
        deleted,
        [
            first["comment_id"].as_u64().unwrap(),
            second["comment_id"].as_u64().unwrap()
        ],
        "{done}"
    );
    let left: Vec<u64> = fake.comments_on(n).iter().map(|c| c.id).collect();
    assert_eq!(left, [theirs], "mallory's comment stays");
    let listed = forge(&fake, d, "list --json");
    assert_eq!(listed["records"].as_array().unwrap().len(), 0, "{listed}");
}
