//! The fencing rule holds across `prune` and `fork`, through the real binary on both stores:
//! after a takeover, an old writer's late checkpoint is fenced, and neither a prune (which used
//! to count it among the newest and delete the owner's record) nor a fork (which used to copy
//! it) changes what `resume` answers or brings the fenced state back.

use std::process::Output;

use serde_json::Value;

use crate::common::cli::{Bin, parse_ok, stderr, words};
use crate::common::world::World;
use crate::fake_forge::{BOT_TOKEN, OWNER, REPO};

/// Runs `line` on `world` as writer `writer` (`FORGESTATE_WRITER`; `None`: the machine's own).
fn run(world: &World, writer: Option<&str>, line: &str) -> Output {
    let mut args = words(line);
    let mut bin = Bin::new(world.d());
    if let Some(w) = writer {
        bin = bin.env("FORGESTATE_WRITER", w);
    }
    match &world.fake {
        Some(fake) => bin.forge(&fake.uri(), OWNER, REPO, BOT_TOKEN).run(&args),
        None => {
            args.extend(["--store".into(), world.store().display().to_string()]);
            bin.run(&args)
        }
    }
}

fn ok(world: &World, writer: Option<&str>, line: &str) -> Value {
    let line = format!("{line} --json");
    parse_ok(&words(&line), &run(world, writer, &line))
}

fn comment(answer: &Value) -> u64 {
    answer["comment_id"].as_u64().expect("a comment id")
}

fn planned(plan: &Value) -> Vec<u64> {
    plan["delete"]
        .as_array()
        .expect("a plan")
        .iter()
        .map(|d| d["comment_id"].as_u64().expect("a comment id"))
        .collect()
}

/// The brief's repro: w-old checkpoints, the session is taken over for w-new, w-new checkpoints,
/// then w-old checkpoints late (fenced). Answers the comment ids of w-old's first checkpoint
/// and of its fenced one.
fn taken_over_with_a_late_write(world: &World) -> (u64, u64) {
    let first = ok(
        world,
        Some("w-old"),
        "checkpoint --agent t --session s --phase a --set v=1",
    );
    ok(
        world,
        None,
        "resume --agent t --session s --take-over --writer w-new",
    );
    ok(
        world,
        Some("w-new"),
        "checkpoint --agent t --session s --phase owner --set v=2",
    );
    let late = ok(
        world,
        Some("w-old"),
        "checkpoint --agent t --session s --phase fenced --set v=3",
    );
    assert_eq!(late["posted"], true, "{}", world.name());
    (comment(&first), comment(&late))
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_keeps_the_newest_believed_records_and_every_fenced_one() {
    for world in World::both().await {
        let name = world.name();
        let (first, late) = taken_over_with_a_late_write(&world);
        let resume = "resume --agent t --session s";
        let before = ok(&world, None, resume);
        assert_eq!(before["phase"], "owner", "{name}: {before}");
        assert_eq!(before["fenced"], 1, "{name}");
        let latest = ok(&world, None, "latest --agent t --session s");

        // Only w-old's first checkpoint is older than the newest believed one (the owner's):
        // the fenced one neither counts toward --keep nor goes as old.
        let dry = ok(&world, None, "prune --keep 1");
        assert_eq!(planned(&dry), [first], "{name}: {dry}");
        let done = ok(&world, None, "prune --keep 1 --yes");
        assert_eq!(planned(&done), planned(&dry), "{name}: the dry run said so");
        assert_eq!(
            done["deleted"],
            serde_json::json!([first]),
            "{name}: {done}"
        );

        let after = ok(&world, None, resume);
        assert_eq!(after, before, "{name}: resume answers the same");
        assert_eq!(after["data"]["v"], 2, "{name}");
        assert_eq!(
            ok(&world, None, "latest --agent t --session s"),
            latest,
            "{name}"
        );
        let list = ok(&world, None, "list --session s");
        let fenced: Vec<u64> = list["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["fenced"] == true)
            .map(|r| r["comment"]["id"].as_u64().unwrap())
            .collect();
        assert_eq!(fenced, [late], "{name}: still there, still fenced: {list}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_never_deletes_a_takeover_that_still_fences_a_record() {
    for world in World::both().await {
        let name = world.name();
        ok(
            &world,
            Some("w-old"),
            "checkpoint --agent t --session s --phase a --set v=1",
        );
        let take = "resume --agent t --session s --take-over --writer w-new";
        ok(&world, None, take);
        ok(
            &world,
            Some("w-old"),
            "checkpoint --agent t --session s --phase fenced --set v=3",
        );
        // A second takeover for the same owner: the first one alone fences w-old's record.
        ok(&world, None, take);
        let resume = "resume --agent t --session s";
        let before = ok(&world, None, resume);
        assert_eq!(before["phase"], "a", "{name}: {before}");
        assert_eq!(before["fenced"], 1, "{name}");

        let dry = ok(&world, None, "prune --keep 1");
        assert_eq!(planned(&dry), Vec::<u64>::new(), "{name}: {dry}");
        let done = ok(&world, None, "prune --keep 1 --yes");
        assert_eq!(done["deleted"], serde_json::json!([]), "{name}: {done}");
        assert_eq!(ok(&world, None, resume), before, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_leaves_a_writer_the_session_was_taken_from_a_record_to_learn_it_by() {
    for world in World::both().await {
        let name = world.name();
        ok(
            &world,
            Some("w-old"),
            "checkpoint --agent t --session s --phase a --set v=1",
        );
        ok(
            &world,
            None,
            "resume --agent t --session s --take-over --writer w-new",
        );
        ok(
            &world,
            Some("w-new"),
            "checkpoint --agent t --session s --phase owner --set v=2",
        );
        let fenced = |when: &str| {
            let out = run(&world, Some("w-old"), "resume --agent t --session s --json");
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(73), "{name}, {when}: {err}");
            assert!(err.contains("fenced:"), "{name}, {when}: {err}");
        };
        fenced("before the prune");
        // w-old's only record is older than the owner's, but it is how w-old learns (exit 73)
        // that the session is not its own any more.
        let dry = ok(&world, None, "prune --keep 1");
        assert_eq!(planned(&dry), Vec::<u64>::new(), "{name}: {dry}");
        ok(&world, None, "prune --keep 1 --yes");
        fenced("after the prune");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_starts_from_the_checkpoint_resume_answers_never_a_fenced_one() {
    for world in World::both().await {
        let name = world.name();
        taken_over_with_a_late_write(&world);
        let owner = ok(&world, None, "resume --agent t --session s");
        assert_eq!(owner["data"], serde_json::json!({"v": 2}), "{name}");

        for (n, fork) in [
            "fork --session s --new-session s2",
            "fork --session s --agent t --new-session s3",
            "--refresh fork --session s --new-session s4",
        ]
        .into_iter()
        .enumerate()
        {
            let forked = ok(&world, None, fork);
            let new = format!("s{}", n + 2);
            assert_eq!(
                forked["record"]["parent"], owner["latest_id"],
                "{name}: {fork}: {forked}"
            );
            let resumed = ok(&world, None, &format!("resume --agent t --session {new}"));
            assert_eq!(resumed["phase"], "owner", "{name}: {fork}: {resumed}");
            assert_eq!(
                resumed["data"],
                serde_json::json!({"v": 2}),
                "{name}: {fork}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_at_a_fenced_record_is_refused_as_bad_data() {
    for world in World::both().await {
        let name = world.name();
        taken_over_with_a_late_write(&world);
        let list = ok(&world, None, "list --session s");
        let fenced = list["records"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["fenced"] == true)
            .and_then(|r| r["id"].as_str())
            .expect("a fenced record")
            .to_string();
        let before = world.records();

        let out = run(
            &world,
            None,
            &format!("fork --session s --at {fenced} --new-session s2"),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(65), "{name}: {err}");
        assert!(err.contains(&format!("record {fenced} is fenced")), "{err}");
        assert!(err.contains("writer w-old"), "{err}");
        assert_eq!(world.records(), before, "{name}: nothing was posted");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn list_and_history_mark_the_fenced_record_as_text_and_json() {
    for world in World::both().await {
        let name = world.name();
        let (_, late) = taken_over_with_a_late_write(&world);
        for line in ["list --session s", "history --session s"] {
            let out = run(&world, None, line);
            let text = String::from_utf8_lossy(&out.stdout);
            let marked: Vec<&str> = text.lines().filter(|l| l.contains("(fenced)")).collect();
            assert_eq!(marked.len(), 1, "{name} {line}: {text}");
            assert!(
                marked[0].contains("fenced (fenced)") || marked[0].contains("phase=fenced"),
                "{name} {line}: the late record is the one marked: {text}"
            );
        }
        let history = ok(&world, None, "history --session s");
        let fenced: Vec<u64> = history["records"]
            .as_array()
            .expect("records")
            .iter()
            .filter(|s| s["fenced"] == true)
            .map(|s| s["comment_id"].as_u64().unwrap_or_default())
            .collect();
        assert_eq!(fenced, [late], "{name}: {history}");
    }
}
