//! `prune` and the `Thread::delete` under it, on both backends: the dry run changes nothing,
//! `--yes` deletes only the identity's own older records, the newest of every group stays, and
//! deleting is idempotent.

use crate::{common, fake_forge};
use std::path::Path;

use common::cli::guarded_json;
use common::cli::{Bin, parse_ok, stderr, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, client, session};
use forgestate::format::{Record, Renderer};
use forgestate::store::{LocalThread, THREAD_FILE, Thread};
use serde_json::{Value, json};

fn local(dir: &Path, user: &str, line: &str) -> Value {
    let out = Bin::new(dir).env("USER", user).run(&words(&format!(
        "--store {} {line}",
        dir.join("st").display()
    )));
    parse_ok(&words(line), &out)
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn record_ids(list: &Value) -> Vec<u64> {
    list["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["comment"]["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn local_prune_dry_run_then_yes_keeps_the_newest_and_other_authors_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cp = |user: &str, session: &str, phase: &str| {
        local(
            d,
            user,
            &format!("checkpoint --agent w --session {session} --phase {phase} --json"),
        );
    };
    cp("alice", "s1", "a1"); // 1: the oldest of the group, but alice's
    for p in ["p1", "p2", "p3", "p4"] {
        cp("tester", "s1", p); // 2..5
    }
    for _ in 0..3 {
        local(d, "tester", "health --agent w --session s1 --json"); // 6..8
    }
    cp("tester", "s2", "q1"); // 9: alone in its group

    let dry = local(d, "tester", "prune --keep 2 --json");
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["author"], "tester");
    let planned: Vec<u64> = dry["delete"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["comment_id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        planned,
        [2, 3, 6],
        "checkpoints and health counted apart: {dry}"
    );
    assert_eq!(
        dry["kept_other_authors"], 1,
        "alice's a1 is older but not ours"
    );
    assert_eq!(ids(&dry["deleted"]), Vec::<u64>::new());
    let all = local(d, "tester", "list --json");
    assert_eq!(record_ids(&all).len(), 9, "a dry run deletes nothing");

    let done = local(d, "tester", "prune --keep 2 --yes --json");
    assert_eq!(done["dry_run"], false);
    assert_eq!(ids(&done["deleted"]), [2, 3, 6]);
    let left = local(d, "tester", "list --json");
    assert_eq!(record_ids(&left), [1, 4, 5, 7, 8, 9], "ids never change");
    let resume = local(d, "tester", "resume --agent w --session s1 --json");
    assert_eq!(resume["phase"], "p4", "the newest checkpoint stays");

    let again = local(d, "tester", "prune --keep 2 --yes --json");
    assert_eq!(
        ids(&again["deleted"]),
        Vec::<u64>::new(),
        "nothing left to do"
    );
    let next = local(
        d,
        "tester",
        "checkpoint --agent w --session s1 --phase p5 --json",
    );
    assert_eq!(next["comment_id"], 10, "new ids stay above every old one");

    let human = Bin::new(d).line(&format!(
        "--store {} prune --keep 1",
        d.join("st").display()
    ));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.starts_with("would delete 3 record(s) by tester"),
        "{text}"
    );
    assert!(text.contains("run again with --yes"), "{text}");
}

#[test]
fn keep_zero_is_refused() {
    // A flag's value, not the configuration: exit 64 (docs/cli.md, exit codes).
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path()).line("--store st prune --keep 0 --yes");
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(stderr(&out).contains("keep at least 1"), "{}", stderr(&out));
}

#[tokio::test]
async fn local_delete_keeps_torn_lines_and_empties_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let t = LocalThread::new(dir.path(), "me");
    for body in ["one", "two", "three"] {
        t.append(body).await.unwrap();
    }
    let file = dir.path().join(THREAD_FILE);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(br#"{"id":4,"author":"me","crea"#);
    std::fs::write(&file, &bytes).unwrap();

    let gone = t.delete(&[1, 1, 9]).await.unwrap();
    assert_eq!((gone.deleted, gone.missing), (vec![1], vec![9]));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with(r#"{"id":4,"author":"me","crea"#), "{text}");
    let listed: Vec<u64> = t
        .list(None)
        .await
        .unwrap()
        .comments
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed, [2, 3]);
    // The newest comment goes too, but its line stays with no body, so its id is never reused.
    let gone = t.delete(&[3]).await.unwrap();
    assert_eq!((gone.deleted, gone.missing), (vec![3], vec![]));
    let comments = t.list(None).await.unwrap().comments;
    let bodies: Vec<(u64, &str)> = comments.iter().map(|c| (c.id, c.body.as_str())).collect();
    assert_eq!(bodies, [(2, "two"), (3, "")]);
    assert_eq!(t.append("four").await.unwrap().id, 4);
}

fn body(agent: &str, phase: &str) -> String {
    let record = Record::checkpoint(agent, "s1", phase, json!({})).unwrap();
    Renderer::embedded().unwrap().render(&record).unwrap()
}

fn forge(fake: &FakeForge, dir: &Path, line: &str) -> Value {
    let out = Bin::new(dir)
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .dirs()
        .line(line);
    parse_ok(&words(line), &out)
}

#[tokio::test(flavor = "multi_thread")]
async fn forge_prune_deletes_only_the_bots_own_older_records() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let theirs = fake.add_comment(n, "mallory", &body("w", "forged"));
    let chat = fake.add_comment(n, "mallory", "looks stuck to me");
    let mut ours = Vec::new();
    for p in ["p1", "p2", "p3"] {
        let posted = forge(
            &fake,
            d,
            &format!("checkpoint --agent w --session s1 --phase {p} --json"),
        );
        ours.push(posted["comment_id"].as_u64().unwrap());
    }
    let dry = forge(&fake, d, "prune --keep 1 --json");
    assert_eq!(dry["delete"].as_array().unwrap().len(), 2, "{dry}");
    assert_eq!(fake.comments_on(n).len(), 5, "a dry run deletes nothing");

    let done = forge(&fake, d, "prune --keep 1 --yes --json");
    assert_eq!(ids(&done["deleted"]), ours[..2]);
    let left: Vec<u64> = fake.comments_on(n).iter().map(|c| c.id).collect();
    assert_eq!(left, [theirs, chat, ours[2]], "mallory's comments stay");
    // The read cache (warmed by the reads above) cannot see deletions through `since`: the prune
    // drops it, so the next read does not bring the deleted records back.
    let listed = forge(&fake, d, "list --json");
    assert_eq!(record_ids(&listed), [ours[2]], "{listed}");
    let deletes = fake
        .requests()
        .await
        .iter()
        .filter(|r| r.method.as_str() == "DELETE")
        .count();
    assert_eq!(deletes, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn forge_delete_is_idempotent() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let id = fake.add_comment(n, "ca-bot", "x");
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    let first = c.thread_raw().delete(&[id]).await.unwrap();
    assert_eq!((first.deleted, first.missing), (vec![id], vec![]));
    let second = c.thread_raw().delete(&[id]).await.unwrap();
    assert_eq!(
        (second.deleted, second.missing),
        (vec![], vec![id]),
        "a 404 is already gone"
    );
}

#[test]
fn prune_deletes_a_record_with_its_later_copies_so_resume_never_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    guarded_json(d, "checkpoint --agent w --session s --phase p1");
    guarded_json(d, "checkpoint --agent w --session s --phase p2");
    // The first checkpoint is posted again (a retried post that had in fact landed): same
    // record, same author, a later comment. Readers skip it as a duplicate.
    let thread = d.join("st").join(forgestate::store::THREAD_FILE);
    let text = std::fs::read_to_string(&thread).unwrap();
    let mut copy: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    copy["id"] = 3.into();
    std::fs::write(&thread, format!("{text}{copy}\n")).unwrap();
    guarded_json(d, "checkpoint --agent w --session other --phase q");
    assert_eq!(
        guarded_json(d, "resume --agent w --session s")["phase"],
        "p2"
    );

    let plan = guarded_json(d, "prune --keep 1");
    let doomed: Vec<u64> = plan["delete"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["comment_id"].as_u64().unwrap())
        .collect();
    assert_eq!(doomed, vec![1, 3], "the record and its copy: {plan}");
    guarded_json(d, "prune --keep 1 --yes");
    let resume = guarded_json(d, "resume --agent w --session s");
    assert_eq!(
        resume["phase"], "p2",
        "the newest checkpoint still wins: {resume}"
    );
    let list = guarded_json(d, "list --invalid");
    assert_eq!(
        list["invalid"],
        serde_json::json!([]),
        "no copy left: {list}"
    );
}
