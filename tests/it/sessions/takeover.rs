//! One writer per session (issue #43), through the real binary on both stores: a supervisor
//! takes a session over for the next worker while the old worker keeps saving; every reader,
//! fresh or warm, resumes from the new owner's line; the old worker's next read gets exit 73
//! naming the takeover; with `--check-owner` its save posts nothing; `history`, `list` and
//! `status` keep and count its fenced records.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::cli::{Bin, parse_ok, stderr, words};
use crate::common::world::World;
use crate::fake_forge::{BOT_TOKEN, OWNER, REPO};

/// One machine (its own home, so its own state directory and writer), the world's store.
struct Machine<'a> {
    home: tempfile::TempDir,
    world: &'a World,
    /// `FORGESTATE_WRITER`, for the next worker a supervisor took the session over for.
    writer: Option<&'static str>,
    /// Whether its configuration file says `[session] check_owner = true`.
    check_owner: std::cell::Cell<bool>,
}

impl<'a> Machine<'a> {
    fn new(world: &'a World) -> Machine<'a> {
        Machine {
            home: tempfile::tempdir().unwrap(),
            world,
            writer: None,
            check_owner: std::cell::Cell::new(false),
        }
    }

    fn as_writer(world: &'a World, writer: &'static str) -> Machine<'a> {
        Machine {
            writer: Some(writer),
            ..Machine::new(world)
        }
    }

    fn run(&self, line: &str) -> Output {
        let mut args = words(line);
        let home: &Path = self.home.path();
        let mut bin = Bin::new(home);
        if let Some(w) = self.writer {
            bin = bin.env("FORGESTATE_WRITER", w);
        }
        if self.check_owner.get() {
            let config = home.join("check-owner.toml");
            std::fs::write(&config, "[session]\ncheck_owner = true\n").unwrap();
            bin = bin.env("FORGESTATE_CONFIG", config.display().to_string());
        }
        match &self.world.fake {
            Some(fake) => bin.forge(&fake.uri(), OWNER, REPO, BOT_TOKEN).run(&args),
            None => {
                args.extend(["--store".into(), self.world.store().display().to_string()]);
                bin.run(&args)
            }
        }
    }

    fn ok(&self, line: &str) -> Value {
        let line = format!("{line} --json");
        parse_ok(&words(&line), &self.run(&line))
    }

    /// Runs `line`, which must fail with exit 73 as a fenced writer; answers the message.
    fn fenced(&self, line: &str) -> String {
        let out = self.run(line);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(73), "{line}: {err}");
        assert!(err.contains("fenced:"), "{line}: {err}");
        err
    }
}

fn id(answer: &Value) -> String {
    answer["id"].as_str().expect("an id").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_supervisor_takes_a_session_over_while_the_old_worker_keeps_saving() {
    for world in World::both().await {
        let name = world.name();
        let old = Machine::new(&world);
        old.ok("checkpoint --agent w --session s --phase clone_complete --set n=1");
        let before =
            id(&old.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=2"));
        let old_writer = old.ok("list --session s")["records"][0]["writer"]
            .as_str()
            .expect("every record names its writer")
            .to_string();

        // The supervisor takes the session over for the next worker.
        let supervisor = Machine::new(&world);
        let taken = supervisor.ok("resume --agent w --session s --take-over --writer w-next");
        let takeover = taken["takeover_id"]
            .as_str()
            .expect("a takeover id")
            .to_string();
        assert_eq!(taken["owner"]["owner"], "w-next", "{name}: {taken}");
        assert_eq!(taken["owner"]["from_record"], before.as_str(), "{name}");
        assert_eq!(taken["latest_id"], takeover.as_str(), "{name}");
        assert_eq!(taken["phase"], "subtask_1_complete", "{name}");

        // The old worker only looked stalled: it keeps saving. The save posts (one request),
        // and nobody resumes from it.
        let stale =
            old.ok("checkpoint --agent w --session s --phase subtask_2_complete --set n=99");
        assert_eq!(stale["posted"], true, "{name}");
        let stale_id = id(&stale);

        // The next worker, started as the writer the session was taken over for.
        let next = Machine::as_writer(&world, "w-next");
        let first = next.ok("resume --agent w --session s");
        assert_eq!(first["phase"], "subtask_1_complete", "{name}: {first}");
        assert_eq!(first["data"]["n"], 2, "{name}");
        assert_eq!(first["fenced"], 1, "{name}");
        assert_eq!(first["latest_id"], takeover.as_str(), "{name}");
        assert!(
            first["warnings"].to_string().contains(&stale_id),
            "{name}: a warning names the fenced record: {first}"
        );
        assert!(
            first["conflicts"].as_array().unwrap().is_empty(),
            "{name}: {first}"
        );
        let new = next.ok("checkpoint --agent w --session s --phase subtask_2_complete --set n=3");
        assert_eq!(new["record"]["writer"], "w-next", "{name}");
        assert_eq!(new["record"]["parent"], takeover.as_str(), "{name}");
        let new_id = id(&new);

        // The old worker writes once more after the new owner did.
        old.ok("checkpoint --agent w --session s --phase subtask_3_complete --set n=100");

        // Every reader, fresh or warm (the supervisor reads twice), agrees on the new line.
        let fresh = Machine::new(&world);
        for reader in [&fresh, &supervisor, &supervisor, &next] {
            let r = reader.ok("resume --agent w --session s");
            assert_eq!(r["record_id"], new_id.as_str(), "{name}: {r}");
            assert_eq!(r["data"]["n"], 3, "{name}");
            assert_eq!(r["fenced"], 2, "{name}");
            assert_eq!(r["owner"]["owner"], "w-next", "{name}");
            let latest = reader.ok("latest --agent w --session s --kind checkpoint");
            assert_eq!(latest["record"]["id"], new_id.as_str(), "{name}: {latest}");
        }
        let status = fresh.ok("status");
        let row = &status["rows"][0];
        assert_eq!(row["owner"], "w-next", "{name}: {row}");
        assert_eq!(row["fenced"], 2, "{name}");
        assert_eq!(
            row["phase"], "subtask_2_complete",
            "{name}: never the fenced phase"
        );
        assert_ne!(row["verdict"], "conflicted", "{name}: {row}");
        // History and list keep the fenced records, marked.
        let list = fresh.ok("list --session s");
        let fenced: Vec<&Value> = list["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["fenced"] == true)
            .collect();
        assert_eq!(fenced.len(), 2, "{name}: {list}");
        assert!(fenced.iter().all(|e| e["writer"] == old_writer.as_str()));
        assert!(fenced.iter().all(|e| e["writer"] != "w-next"));
        let history = fresh.ok("history --session s");
        assert!(
            history.to_string().contains(&stale_id),
            "{name}: history keeps it"
        );

        // The old worker's next read learns it: exit 73 naming who, when, from which record.
        for line in [
            "resume --agent w --session s".to_string(),
            "latest --agent w --session s".to_string(),
            format!("checkpoint --agent w --session s --phase x --if-latest {new_id}"),
            "checkpoint --agent w --session s --phase x --merge".to_string(),
        ] {
            let err = old.fenced(&line);
            for named in ["w-next", takeover.as_str(), before.as_str()] {
                assert!(err.contains(named), "{name}: {line}: {named} in {err}");
            }
        }
        // With --check-owner its save reads first and posts nothing.
        let count = world.records();
        old.fenced("checkpoint --agent w --session s --phase x --check-owner");
        assert_eq!(world.records(), count, "{name}: nothing posted");
        // The owner's own --check-owner save goes through.
        next.ok("checkpoint --agent w --session s --phase subtask_3_complete --check-owner");
        assert_eq!(world.records(), count + 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_takeovers_in_one_second_both_post_and_every_reader_picks_the_same_owner() {
    for world in World::both().await {
        let name = world.name();
        let worker = Machine::new(&world);
        worker.ok("checkpoint --agent w --session s --phase clone_complete --set n=1");
        let (b, c) = (Machine::new(&world), Machine::new(&world));
        let tb = b.ok("resume --agent w --session s --take-over --writer w-b");
        let tc = c.ok("resume --agent w --session s --take-over --writer w-c");
        assert_ne!(tb["takeover_id"], tc["takeover_id"], "{name}: both posted");
        let status = Machine::new(&world).ok("status");
        assert_ne!(
            status["rows"][0]["verdict"], "conflicted",
            "{name}: {status}"
        );
        // Both continue as their writer; the thread's order decides who owns the session.
        let (wb, wc) = (
            Machine::as_writer(&world, "w-b"),
            Machine::as_writer(&world, "w-c"),
        );
        let owners: Vec<Value> = [&worker, &b, &c, &Machine::new(&world)]
            .iter()
            .map(|m| m.ok("status")["rows"][0]["owner"].clone())
            .collect();
        assert!(owners.iter().all(|o| *o == owners[0]), "{name}: {owners:?}");
        let (winner, loser) = match owners[0].as_str() {
            Some("w-c") => (&wc, &wb),
            Some("w-b") => (&wb, &wc),
            other => panic!("{name}: owner {other:?}"),
        };
        winner.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=2");
        loser.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=66");
        let r = Machine::new(&world).ok("resume --agent w --session s");
        assert_eq!(r["data"]["n"], 2, "{name}: {r}");
        // The loser learns it at its next read.
        loser.fenced("resume --agent w --session s");
        winner.ok("resume --agent w --session s");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fenced_record_is_blamed_on_the_takeover_that_fenced_it_not_a_later_one() {
    for world in World::both().await {
        let name = world.name();
        let old = Machine::as_writer(&world, "w-old");
        old.ok("checkpoint --agent w --session s --phase clone_complete --set n=1");
        let next =
            Machine::new(&world).ok("resume --agent w --session s --take-over --writer w-next");
        let stray =
            id(&old.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=66"));
        // The old writer takes the session back: its stray record stays fenced, by w-next.
        let back = old.ok("resume --agent w --session s --take-over");
        assert_ne!(back["takeover_id"], next["takeover_id"], "{name}");
        let r = Machine::new(&world).ok("resume --agent w --session s");
        let warning = r["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|w| w.contains(&stray) && w.contains("is fenced"))
            .unwrap_or_else(|| panic!("{name}: no warning names {stray}: {r}"))
            .to_string();
        let fencer = next["takeover_id"].as_str().expect("a takeover id");
        assert!(
            warning.contains("writer w-next took it over") && warning.contains(fencer),
            "{name}: {warning}"
        );
        assert!(
            !warning.contains("writer w-old took it over"),
            "{name}: {warning}"
        );
    }
}

/// The POSTs the fake forge received so far (none for the local store).
async fn posts(world: &World) -> usize {
    match &world.fake {
        Some(fake) => fake
            .requests()
            .await
            .iter()
            .filter(|r| r.method.as_str() == "POST")
            .count(),
        None => 0,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn with_check_owner_in_the_config_a_fenced_writers_plain_save_posts_nothing() {
    for world in World::both().await {
        let name = world.name();
        let old = Machine::new(&world);
        old.check_owner.set(true);
        // While it owns the session, the key costs a read and the save posts.
        old.ok("checkpoint --agent w --session s --phase clone_complete --set n=1");
        let before =
            id(&old.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=2"));
        let supervisor = Machine::new(&world);
        let taken = supervisor.ok("resume --agent w --session s --take-over --writer w-next");
        let takeover = taken["takeover_id"].as_str().expect("a takeover id");

        // The key alone (no flag) makes the fenced writer's plain save read, refuse, post nothing.
        let (count, posted) = (world.records(), posts(&world).await);
        let err =
            old.fenced("checkpoint --agent w --session s --phase subtask_2_complete --set n=99");
        for named in ["w-next", takeover, before.as_str()] {
            assert!(err.contains(named), "{name}: {named} in {err}");
        }
        assert_eq!(world.records(), count, "{name}: nothing posted");
        assert_eq!(posts(&world).await, posted, "{name}: no request posted");
        let answer = Machine::new(&world).ok("resume --agent w --session s");
        assert_eq!(answer["fenced"], 0, "{name}: {answer}");
        assert_eq!(answer["data"]["n"], 2, "{name}");

        // Without the key, the same writer's plain save is posted (and ignored by readers).
        old.check_owner.set(false);
        let stale =
            old.ok("checkpoint --agent w --session s --phase subtask_2_complete --set n=99");
        assert_eq!(stale["posted"], true, "{name}");
        assert_eq!(world.records(), count + 1, "{name}");
        let answer = Machine::new(&world).ok("resume --agent w --session s");
        assert_eq!(answer["fenced"], 1, "{name}: {answer}");
        assert_eq!(answer["data"]["n"], 2, "{name}");

        // The new owner with the key saves as usual.
        let next = Machine::as_writer(&world, "w-next");
        next.check_owner.set(true);
        next.ok("checkpoint --agent w --session s --phase subtask_2_complete --set n=3");
        assert_eq!(world.records(), count + 2, "{name}");
    }
}

/// The rule holds across rotation (the takeover is carried with the owner's newest records)
/// and export: after a rotation, every reader still resumes from the new owner's line, the
/// old worker still gets exit 73, and its save to the new issue is fenced too; an export read
/// as a local store agrees.
#[tokio::test(flavor = "multi_thread")]
async fn fencing_holds_across_rotation_and_export() {
    let world = World::forge().await;
    let old = Machine::new(&world);
    old.ok("checkpoint --agent w --session s --phase clone_complete --set n=1");
    let supervisor = Machine::new(&world);
    let taken = supervisor.ok("resume --agent w --session s --take-over --writer w-next");
    let takeover = taken["takeover_id"].as_str().expect("a takeover id");
    old.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=99");
    let next = Machine::as_writer(&world, "w-next");
    let owned =
        id(&next.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=2"));
    old.ok("checkpoint --agent w --session s --phase subtask_2_complete --set n=98");

    let rotated = supervisor.ok("rotate");
    assert!(!rotated["to"].is_null(), "rotated: {rotated}");
    let fresh = Machine::new(&world);
    for reader in [&fresh, &supervisor, &next] {
        let r = reader.ok("resume --agent w --session s");
        assert_eq!(r["record_id"], owned.as_str(), "{r}");
        assert_eq!(r["data"]["n"], 2);
        assert_eq!(r["owner"]["owner"], "w-next", "{r}");
    }
    let err = old.fenced("resume --agent w --session s");
    assert!(err.contains("w-next") && err.contains(takeover), "{err}");
    // The old worker's plain save lands on the new issue, and is fenced there too.
    let stale =
        id(&old.ok("checkpoint --agent w --session s --phase subtask_3_complete --set n=97"));
    let r = Machine::new(&world).ok("resume --agent w --session s");
    assert_eq!(r["record_id"], owned.as_str(), "{r}");
    assert!(r["warnings"].to_string().contains(&stale), "{r}");
    let latest = fresh.ok("latest --agent w --session s --kind checkpoint");
    assert_eq!(latest["record"]["id"], owned.as_str(), "{latest}");
    // The whole history (`list --all`, the rotated-away issue included) marks every fenced
    // record, those left behind on the old issue too.
    {
        let line = "list --all --session s";
        let all = Machine::new(&world).ok(line);
        let records = all["records"].as_array().expect("records");
        let fenced: Vec<i64> = records
            .iter()
            .filter(|e| e["fenced"] == true)
            .filter_map(|e| e["data"]["n"].as_i64())
            .collect();
        assert_eq!(fenced.len(), 3, "{line}: {all}");
        assert!(
            [99, 98, 97].iter().all(|n| fenced.contains(n)),
            "{line}: {fenced:?}"
        );
    }

    // An export, read as a local store, agrees.
    let archive = supervisor.home.path().join("archive");
    supervisor.ok(&format!("export --to {}", archive.display()));
    let out = crate::common::cli::Bin::new(supervisor.home.path()).run(&words(&format!(
        "--store {} resume --agent w --session s --json",
        archive.display()
    )));
    let doc: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(doc["record_id"], owned.as_str(), "{doc}");
    assert_eq!(doc["owner"]["owner"], "w-next", "{doc}");
    assert!(doc["fenced"].as_u64().unwrap_or(0) >= 1, "{doc}");
}

/// The rule holds across export and import, on both stores: a thread exported and imported
/// into a fresh local store keeps the takeover, every reader of the import resumes from the
/// new owner's record, the fenced records stay fenced, and the old worker's read of it (as the
/// same writer) gets exit 73.
#[tokio::test(flavor = "multi_thread")]
async fn fencing_holds_across_export_and_import() {
    for world in World::both().await {
        let name = world.name();
        let old = Machine::new(&world);
        old.ok("checkpoint --agent w --session s --phase clone_complete --set n=1");
        let supervisor = Machine::new(&world);
        supervisor.ok("resume --agent w --session s --take-over --writer w-next");
        old.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=99");
        let next = Machine::as_writer(&world, "w-next");
        let owned =
            id(&next.ok("checkpoint --agent w --session s --phase subtask_1_complete --set n=2"));

        let archive = supervisor.home.path().join("archive");
        supervisor.ok(&format!("export --to {}", archive.display()));
        let imported = supervisor.home.path().join("imported");
        // A command on `imported`, from the home of `m` (so as its writer).
        let on_import = |m: &Machine, line: &str| {
            let mut bin = Bin::new(m.home.path());
            if world.fake.is_some() {
                bin = bin.dirs();
            }
            let mut args = words(line);
            args.extend(["--store".into(), imported.display().to_string()]);
            bin.run(&args)
        };
        let out = on_import(
            &supervisor,
            &format!("import --from {} --json", archive.display()),
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        for reader in [&supervisor, &Machine::new(&world)] {
            let out = on_import(reader, "resume --agent w --session s --json");
            let r: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{name}: {e}: {}", stderr(&out)));
            assert_eq!(r["record_id"], owned.as_str(), "{name}: {r}");
            assert_eq!(r["owner"]["owner"], "w-next", "{name}: {r}");
            assert_eq!(r["fenced"], 1, "{name}: {r}");
        }
        // A CLI writer is kept per machine and store (its lineage directory), so on the
        // imported store the old worker names its writer to be the same one.
        let old_writer = old.ok("list --session s")["records"][0]["writer"]
            .as_str()
            .expect("a writer")
            .to_string();
        let mut args = words("resume --agent w --session s");
        args.extend(["--store".into(), imported.display().to_string()]);
        let out = Bin::new(old.home.path())
            .env("FORGESTATE_WRITER", old_writer)
            .run(&args);
        assert_eq!(out.status.code(), Some(73), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains("fenced:"), "{name}: {}", stderr(&out));
    }
}

/// A writer name is a header value wherever it is given: an empty one is refused alike by
/// `checkpoint --writer` and `resume --take-over --writer` (exit 65, one sentence), and nothing
/// is posted.
#[test]
fn an_empty_writer_is_refused_alike_by_checkpoint_and_a_takeover() {
    let world = World::local();
    let m = Machine::new(&world);
    for line in [
        "checkpoint --agent w --session s --phase p --writer=",
        "resume --agent w --session s --take-over --writer=",
    ] {
        let out = m.run(line);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(65), "{line}: {err}");
        assert!(
            err.contains("writer is empty; give a non-empty writer")
                && err.matches("give").count() == 1,
            "{line}: {err}"
        );
    }
    let listed = m.ok("list --session s");
    assert_eq!(
        listed["records"].as_array().map(Vec::len),
        Some(0),
        "{listed}"
    );
}
