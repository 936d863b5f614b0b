//! The bare CLI's lineage: each machine remembers, per store, agent and session, the last record
//! it saved or resumed, so successive processes write `Parent:` with no `--parent`; and two
//! machines continuing from one record are reported as two writers (both stores: one fake forge,
//! or one local store, shared by two homes).

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::cli::{Bin, parse_ok, stderr, words};
use crate::common::world::World;
use crate::fake_forge::{BOT_TOKEN, OWNER, REPO};

/// One machine: its own home (so its own state directory), the world's store.
struct Machine<'a> {
    home: tempfile::TempDir,
    world: &'a World,
}

impl<'a> Machine<'a> {
    fn new(world: &'a World) -> Machine<'a> {
        Machine {
            home: tempfile::tempdir().unwrap(),
            world,
        }
    }

    fn run(&self, line: &str) -> Output {
        let mut args = words(line);
        let home: &Path = self.home.path();
        match &self.world.fake {
            Some(fake) => Bin::new(home)
                .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
                .run(&args),
            None => {
                args.extend(["--store".into(), self.world.store().display().to_string()]);
                Bin::new(home).run(&args)
            }
        }
    }

    fn ok(&self, line: &str) -> Value {
        let line = format!("{line} --json");
        parse_ok(&words(&line), &self.run(&line))
    }
}

fn id(answer: &Value) -> String {
    answer["id"].as_str().expect("an id").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_cli_process_continues_the_last_record_its_machine_saved_or_resumed() {
    for world in World::both().await {
        let name = world.name();
        let (a, b) = (Machine::new(&world), Machine::new(&world));
        let root = a.ok("checkpoint --agent w --session s --phase a");
        assert_eq!(
            root["record"]["parent"],
            Value::Null,
            "{name}: a first record"
        );
        let root = id(&root);
        // Machine A's next processes continue its own records, every kind.
        let step = a.ok("checkpoint --agent w --session s --phase b");
        assert_eq!(step["record"]["parent"], root.as_str(), "{name}: {step}");
        let health = a.ok("health --agent w --session s");
        assert_eq!(health["record"]["parent"], id(&step).as_str(), "{name}");
        // Lineage is per session: another session of the agent starts without one.
        let other = a.ok("checkpoint --agent w --session t --phase a");
        assert_eq!(other["record"]["parent"], Value::Null, "{name}");
        // Machine B resumes, so it continues from what resume returned...
        let resumed = b.ok("resume --agent w --session s");
        let latest = resumed["latest_id"].as_str().unwrap().to_string();
        assert_eq!(latest, id(&health), "{name}");
        let from_b = b.ok("checkpoint --agent w --session s --phase c1");
        assert_eq!(from_b["record"]["parent"], latest.as_str(), "{name}");
        // ...and so does machine A, which last saved that same record: two writers.
        let from_a = a.ok("checkpoint --agent w --session s --phase c2");
        assert_eq!(from_a["record"]["parent"], latest.as_str(), "{name}");
        let (one, two) = (id(&from_b), id(&from_a));
        let resumed = a.ok("resume --agent w --session s");
        assert_eq!(resumed["conflicts"][0]["parent"], latest.as_str(), "{name}");
        let warning = resumed["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|m| m.contains("two writers"))
            .unwrap_or_else(|| panic!("{name}: resume warns: {resumed}"))
            .to_string();
        assert!(
            warning.contains(&one) && warning.contains(&two),
            "{warning}"
        );
        let history = b.run("history --session s --json");
        assert!(history.status.success(), "{}", stderr(&history));
        let history: Value = serde_json::from_slice(&history.stdout).unwrap();
        assert_eq!(history["conflicts"][0]["parent"], latest.as_str(), "{name}");
        let status = b.ok("status");
        let row = status["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["session"] == "s")
            .unwrap_or_else(|| panic!("{name}: no row: {status}"));
        assert_eq!(row["verdict"], "conflicted", "{name}: {row}");
        // An end continues the machine's own last record; an explicit --parent still wins.
        let end = b.ok("end --agent w --session s --reason completed");
        assert_eq!(end["record"]["parent"], one.as_str(), "{name}");
        let named = a.ok(&format!(
            "checkpoint --agent w --session t --phase b --parent {root}"
        ));
        assert_eq!(named["record"]["parent"], root.as_str(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lineage_is_kept_where_the_docs_say_and_a_bad_file_is_ignored() {
    for world in World::both().await {
        let name = world.name();
        let a = Machine::new(&world);
        a.ok("checkpoint --agent w --session s --phase a");
        let root = match world.fake {
            Some(_) => a.home.path().join("state/forgestate/lineage"),
            None => world.store().join("lineage"),
        };
        let (writers, files): (Vec<_>, Vec<_>) = crate::common::files_under(&root)
            .into_iter()
            .partition(|f| f.file_name().is_some_and(|n| n == "writer"));
        assert_eq!(files.len(), 1, "{name}: one file per session: {files:?}");
        // Beside them, the machine's writer (issue #43), named on each record it writes.
        assert_eq!(writers.len(), 1, "{name}: {writers:?}");
        let writer = std::fs::read_to_string(&writers[0]).unwrap();
        let listed = a.ok("list --session s");
        assert_eq!(listed["records"][0]["writer"], writer.trim(), "{name}");
        // A file that does not hold a record id is ignored: the record goes without a parent.
        std::fs::write(
            &files[0],
            br#"{"agent":"w","session":"s","id":"x\nPhase: evil"}"#,
        )
        .unwrap();
        let next = a.ok("checkpoint --agent w --session s --phase b");
        assert_eq!(next["record"]["parent"], Value::Null, "{name}: {next}");
    }
}
