//! `export` and `import` on the fake forge and the local store: a forge chain (across a
//! rotation) exported with ids, authors and times, resumed from the exported store; imported
//! into another repository twice (nothing new the second time); an import interrupted by an
//! outage and run again.

use crate::{common, fake_forge};
use std::path::Path;

use crate::fake_forge::bot;
use common::cli::{Bin, args, stderr, stdout, store_args};
use common::{GHP, checkpoint_body, seed_line};
use fake_forge::{BOT_TOKEN, FakeForge, Fault, MALLORY_TOKEN, client, session};
use fake_forge::{OWNER, REPO};
use forgestate::format::{Record, parse};
use forgestate::scan::Filter;
use forgestate::store::Thread;
use forgestate::{Category, Client};
use serde_json::Value;
use serde_json::json;

fn cp(agent: &str, phase: &str) -> Record {
    Record::checkpoint(agent, "s1", phase, json!({"step": phase})).unwrap()
}

/// A thread on `fake` across a rotation: `w` with three checkpoints, `v` with one, a health
/// signal, and an untrusted comment by mallory. Returns the record ids in posting order.
async fn thread(fake: &FakeForge, dir: &Path) -> Vec<String> {
    session(fake);
    let c = bot(fake, dir);
    let mut ids = Vec::new();
    for r in [cp("w", "clone_complete"), cp("v", "clone_complete")] {
        ids.push(c.save(r).await.posted().unwrap().id.unwrap());
    }
    c.rotate().await.unwrap();
    let health = Record::health("w", "s1", "Active", json!({"load": 1}), None).unwrap();
    for r in [
        cp("w", "subtask_1_complete"),
        health,
        cp("w", "subtask_2_complete"),
    ] {
        ids.push(c.save(r).await.posted().unwrap().id.unwrap());
    }
    let m = tempfile::tempdir().unwrap();
    let mallory = client(fake, MALLORY_TOKEN, m.path()).build().unwrap();
    mallory.post(cp("w", "pr_created")).await.unwrap();
    ids
}

#[tokio::test(flavor = "multi_thread")]
async fn export_keeps_ids_authors_and_times_and_the_export_resumes() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ids = thread(&fake, dir.path()).await;
    let c = bot(&fake, dir.path());
    let out = tempfile::tempdir().unwrap();
    let exported = c.export_to(out.path()).await.unwrap();
    assert_eq!(
        (exported.records, exported.written, exported.already),
        (5, 5, 0)
    );

    let local = Client::local_as(out.path(), "someone-else").unwrap();
    let listed = local.list(&Filter::default(), None).await.unwrap();
    let got: Vec<String> = listed
        .entries
        .iter()
        .filter_map(|e| e.record.id.clone())
        .collect();
    assert_eq!(
        got, ids,
        "every believed record once, in thread order, mallory's left out"
    );
    // Each keeps its forge comment: id, author and time (the originals, not carried copies).
    let forge = c
        .query(&forgestate::ListQuery::default().whole_history())
        .await
        .unwrap();
    for (mine, theirs) in listed.entries.iter().zip(&forge.entries) {
        assert_eq!(mine.comment.id, theirs.comment.id);
        assert_eq!(mine.comment.author, "ca-bot");
        assert_eq!(mine.comment.created_at, theirs.comment.created_at);
        assert_eq!(
            mine.record.carried_from, None,
            "the original, not a carried copy"
        );
    }
    let resumed = local.resume("w", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_2_complete");
    assert_eq!(resumed.resume.resume_point, "start");

    // Again: nothing new is written; a new record is.
    let again = c.export_to(out.path()).await.unwrap();
    assert_eq!((again.written, again.already), (0, 5));
    c.save(cp("w", "all_subtasks_complete"))
        .await
        .posted()
        .unwrap();
    let third = c.export_to(out.path()).await.unwrap();
    assert_eq!((third.written, third.already), (1, 5));
    assert_eq!(
        local.resume("w", "s1").await.unwrap().resume.phase,
        "all_subtasks_complete"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_store_exports_too_and_another_threads_directory_is_refused() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let one = Client::local_as(a.path(), "alice").unwrap();
    one.save(cp("w", "clone_complete")).await.posted().unwrap();
    one.save(cp("w", "subtask_1_complete"))
        .await
        .posted()
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    assert_eq!(one.export_to(out.path()).await.unwrap().written, 2);
    let copy = Client::local_as(out.path(), "x").unwrap();
    assert_eq!(
        copy.resume("w", "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    // A second thread whose ids fall below the first's is not mixed in.
    let other = Client::local_as(b.path(), "bob").unwrap();
    other
        .save(cp("z", "clone_complete"))
        .await
        .posted()
        .unwrap();
    let e = other.export_to(out.path()).await.unwrap_err();
    assert!(
        e.to_string().contains("export into an empty directory"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn import_into_another_repository_twice_posts_nothing_new_the_second_time() {
    let source = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ids = thread(&source, dir.path()).await;
    let out = tempfile::tempdir().unwrap();
    bot(&source, dir.path())
        .export_to(out.path())
        .await
        .unwrap();
    let original = Client::local_as(out.path(), "x")
        .unwrap()
        .list(&Filter::default(), None)
        .await
        .unwrap();

    let target = FakeForge::start().await;
    let n = session(&target);
    let tdir = tempfile::tempdir().unwrap();
    let t = bot(&target, tdir.path());
    let first = t.import_from(out.path()).await.unwrap();
    assert_eq!((first.records, first.posted, first.already), (5, 5, 0));
    assert!(first.refused.is_empty(), "{:?}", first.refused);
    let bodies: Vec<Record> = target
        .comments_on(n)
        .iter()
        .map(|c| parse(&c.body).unwrap())
        .collect();
    let posted: Vec<String> = bodies.iter().filter_map(|r| r.id.clone()).collect();
    assert_eq!(posted, ids, "in order, once each");
    for (r, e) in bodies.iter().zip(&original.entries) {
        assert_eq!(
            r.posted_at,
            Some(e.comment.created_at),
            "the original time is kept"
        );
    }

    let second = t.import_from(out.path()).await.unwrap();
    assert_eq!((second.posted, second.already), (0, 5));
    assert_eq!(
        target.comments_on(n).len(),
        5,
        "nothing new the second time"
    );
    assert_eq!(
        t.resume("w", "s1").await.unwrap().resume.phase,
        "subtask_2_complete"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_import_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let local = Client::local_as(dir.path(), "alice").unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let r = cp("w", &format!("subtask_{i}_complete"));
        ids.push(local.save(r).await.posted().unwrap().id.unwrap());
    }
    // A seed record without an Id is imported once too.
    let seed = "[CHECKPOINT] v\nVersion: 1.0\nPhase: clone_complete\nSession: s1\nTime: \
                2026-11-29T08:40:58Z\n\nState Data:\n```json\n{\"n\": 1}\n```\n";
    local.thread_raw().append(seed).await.unwrap();

    let target = FakeForge::start().await;
    let n = session(&target);
    let tdir = tempfile::tempdir().unwrap();
    let t = bot(&target, tdir.path());
    target.inject("/comments", Fault::Pass);
    target.inject("/comments", Fault::Pass);
    for _ in 0..20 {
        target.inject("/comments", Fault::Status(503));
    }
    let e = t.import_from(dir.path()).await.unwrap_err();
    assert!(e.to_string().contains("injected failure"), "{e}");
    assert_eq!(
        target.comments_on(n).len(),
        2,
        "two posted before the outage, then it stopped"
    );
    assert!(target.state().faults.len() < 20);

    // With an outbox, the record the outage hit is spooled and the import stops there.
    target.state().faults.clear();
    for _ in 0..20 {
        target.inject("/comments", Fault::Status(503));
    }
    let spooling = client(&target, BOT_TOKEN, tdir.path())
        .outbox(tdir.path().join("outbox"))
        .build()
        .unwrap();
    let stopped = spooling.import_from(dir.path()).await.unwrap();
    assert_eq!(
        (stopped.posted, stopped.already, stopped.spooled),
        (0, 2, 1)
    );
    assert_eq!(stopped.left, 4);
    assert!(
        stopped
            .warnings
            .iter()
            .any(|w| w.contains("run the import again"))
    );
    target.state().faults.clear();
    // Once the forge answers, the outbox is flushed (`forgestate flush`, or a later command's
    // drain) and the rerun posts the rest.
    // Each unit of work is a command of its own, as docs/failure-handling.md asks of a program.
    spooling.begin_command();
    let flushed = spooling.flush().await;
    assert_eq!(target.comments_on(n).len(), 3, "{flushed:?}");
    spooling.begin_command();
    let rerun = spooling.import_from(dir.path()).await.unwrap();
    assert_eq!(
        (rerun.records, rerun.posted, rerun.already),
        (7, 4, 3),
        "{rerun:?}"
    );
    let posted: Vec<Option<String>> = target
        .comments_on(n)
        .iter()
        .map(|c| parse(&c.body).unwrap().id)
        .collect();
    let mut want: Vec<Option<String>> = ids.into_iter().map(Some).collect();
    want.push(None);
    assert_eq!(posted, want, "each once, in order");
    let third = spooling.import_from(dir.path()).await.unwrap();
    assert_eq!((third.posted, third.already), (0, 7));
    assert_eq!(target.comments_on(n).len(), 7);
}

#[tokio::test(flavor = "multi_thread")]
async fn import_goes_through_the_gate_every_post_does() {
    let dir = tempfile::tempdir().unwrap();
    let local = Client::local_as(dir.path(), "alice").unwrap();
    let secret =
        Record::checkpoint("w", "s1", "clone_complete", json!({"api_key": "hunter2"})).unwrap();
    // Written raw, unredacted, as an older tool might have.
    let body = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&secret)
        .unwrap();
    local.thread_raw().append(&body).await.unwrap();
    let target = FakeForge::start().await;
    let n = session(&target);
    let tdir = tempfile::tempdir().unwrap();
    let report = bot(&target, tdir.path())
        .import_from(dir.path())
        .await
        .unwrap();
    assert_eq!(report.posted, 1);
    let posted = &target.comments_on(n)[0].body;
    assert!(
        !posted.contains("hunter2") && posted.contains("[REDACTED]"),
        "{posted}"
    );
    let missing = tempfile::tempdir().unwrap();
    let e = bot(&target, tdir.path())
        .import_from(missing.path())
        .await
        .unwrap_err();
    assert_eq!(e.category(), Category::Usage, "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_exports_publishes_and_imports() {
    use fake_forge::{OWNER, REPO};
    let source = FakeForge::start().await;
    let n = session(&source);
    let cwd = tempfile::tempdir().unwrap();
    let bin = common::cli::Bin::new(cwd.path()).forge(&source.uri(), OWNER, REPO, BOT_TOKEN);
    let ok = |out: std::process::Output| {
        assert!(out.status.success(), "{}", common::cli::stderr(&out));
        serde_json::from_str::<serde_json::Value>(&common::cli::stdout(&out)).unwrap()
    };
    ok(bin.line("checkpoint --agent w --session s1 --phase clone_complete --set n=1 --json"));
    let published = ok(bin.line("status --publish --json"));
    assert_eq!(
        (published["issue"].as_u64(), published["written"].as_bool()),
        (Some(n), Some(true))
    );
    assert!(
        source
            .issue_body(n)
            .contains("| w | s1 |  | alive | clone_complete |")
    );
    let again = ok(bin.line("publish --json"));
    assert_eq!(again["written"], false);

    let archive = cwd.path().join("archive");
    let exported = ok(bin.line(&format!("export --to {} --json", archive.display())));
    assert_eq!(exported["written"], 1);
    let local = common::cli::Bin::new(cwd.path());
    let resumed = ok(local.line(&format!(
        "--store {} resume --agent w --session s1 --json",
        archive.display()
    )));
    assert_eq!(resumed["phase"], "clone_complete");

    let target = FakeForge::start().await;
    let m = session(&target);
    let other = tempfile::tempdir().unwrap();
    let into = common::cli::Bin::new(other.path()).forge(&target.uri(), OWNER, REPO, BOT_TOKEN);
    let line = format!("import --from {} --json", archive.display());
    let first = ok(into.line(&line));
    assert_eq!(
        (first["posted"].as_u64(), first["already"].as_u64()),
        (Some(1), Some(0))
    );
    let second = ok(into.line(&line));
    assert_eq!(
        (second["posted"].as_u64(), second["already"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(target.comments_on(m).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn import_refuses_a_record_whose_parent_holds_a_secret() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from");
    std::fs::create_dir_all(&from).unwrap();
    let body = checkpoint_body("s", "a", "01a23317-a9be-7021-b156-1fc2813d2281", Some(GHP));
    std::fs::write(from.join("thread.jsonl"), seed_line(1, &body) + "\n").unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "import",
        "--from",
        from.to_str().unwrap(),
        "--json",
    ]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(report["refused"].as_array().map(Vec::len), Some(1), "{all}");
    let bodies: Vec<String> = fake
        .state()
        .comments
        .iter()
        .map(|c| c.body.clone())
        .collect();
    for body in bodies {
        assert!(
            !body.contains(GHP),
            "import posted the token: {body}\n{all}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn import_keeps_lineage_as_written_and_invents_no_conflict() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let from = d.join("from");
    let a = "01a23317-eb3f-7183-9065-02f58edf1a93";
    let lines = [
        seed_line(1, &checkpoint_body("fc", "a", a, None)),
        // Written by the bare CLI: no `Parent:`.
        seed_line(
            2,
            &checkpoint_body("fc", "b", "01a23317-ec0a-775a-926b-b5daeeb9fcfb", None),
        ),
        seed_line(
            3,
            &checkpoint_body("fc", "c", "01a23317-ec15-707e-b0c3-de5dd6ea10a1", Some(a)),
        ),
    ];
    std::fs::create_dir_all(&from).unwrap();
    std::fs::write(from.join("thread.jsonl"), lines.join("\n") + "\n").unwrap();
    let here = Bin::new(d).run(&args(&[
        "--store",
        from.to_str().unwrap(),
        "resume",
        "--agent",
        "w",
        "--session",
        "fc",
        "--json",
    ]));
    let here: Value = serde_json::from_slice(&here.stdout).unwrap();
    assert_eq!(
        here["conflicts"],
        json!([]),
        "no conflict in the source: {here}"
    );

    let bin = Bin::new(d).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "import",
        "--from",
        from.to_str().unwrap(),
        "--json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let there = bin.run(&args(&[
        "resume",
        "--agent",
        "w",
        "--session",
        "fc",
        "--json",
    ]));
    let there: Value = serde_json::from_slice(&there.stdout).unwrap();
    assert_eq!(
        there["conflicts"],
        json!([]),
        "the import invented a second writer: {there}"
    );
    let bodies: Vec<String> = fake
        .state()
        .comments
        .iter()
        .map(|c| c.body.clone())
        .collect();
    let b = bodies.iter().find(|b| b.contains("Phase: b")).unwrap();
    assert!(
        !b.contains("Parent:"),
        "a parent the record never named: {b}"
    );
}

/// `import` of a record that was edited after posting (its `updated_at` later than its
/// `created_at`, as `export` keeps them): the forge's copy is a fresh, unedited comment, so the
/// edit flag was lost without a word.
#[tokio::test(flavor = "multi_thread")]
async fn import_of_an_edited_record_warns() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from");
    std::fs::create_dir_all(&from).unwrap();
    let body = checkpoint_body("s", "a", "01a23317-a9be-7021-b156-1fc2813d4444", None);
    let line = json!({"id": 1, "author": "local", "created_at": "2026-12-01T19:00:00Z",
                      "updated_at": "2026-12-01T19:05:00Z", "body": body});
    std::fs::write(from.join("thread.jsonl"), line.to_string() + "\n").unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "import",
        "--from",
        from.to_str().unwrap(),
        "--json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["posted"], 1, "{report}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("edited after posting"),
        "the edit flag was dropped silently: {report}"
    );
}

/// docs/dashboard.md: "a directory holding another thread is refused". A local store's own
/// records have small ids (1, 2, …), below every forge comment id, so exporting a forge thread
/// into it mixed the two threads into one file.
#[tokio::test(flavor = "multi_thread")]
async fn export_into_a_local_store_holding_another_thread_is_refused() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let posted = Bin::new(d).run(&store_args(
        d,
        &[
            "checkpoint",
            "--agent",
            "mine",
            "--session",
            "here",
            "--phase",
            "p",
        ],
    ));
    assert!(posted.status.success(), "{}", stderr(&posted));
    let before = std::fs::read(d.join("st/thread.jsonl")).unwrap();
    let bin = Bin::new(d).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let cp = bin.run(&args(&[
        "checkpoint",
        "--agent",
        "w",
        "--session",
        "s",
        "--phase",
        "a",
    ]));
    assert!(cp.status.success(), "{}", stderr(&cp));
    let st = d.join("st").display().to_string();
    let out = bin.run(&args(&["export", "--to", &st, "--json"]));
    assert_ne!(
        out.status.code(),
        Some(0),
        "exported into another thread: {}",
        stdout(&out)
    );
    assert_eq!(
        std::fs::read(d.join("st/thread.jsonl")).unwrap(),
        before,
        "the store changed"
    );
}
