//! An archive exported before a `prune` and imported after it posts the pruned, older records
//! again. They rank by when they were first posted (`Posted-At:`), never above the newest
//! record: `resume`, `latest` and `history` still answer p5, on both stores.

use crate::common::world::World;
use serde_json::Value;

fn phases(doc: &Value) -> Vec<String> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["phase"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn import_after_prune_never_rewinds() {
    for w in World::both().await {
        let name = w.name();
        for n in 1..=5 {
            w.ok(&format!("checkpoint --agent a --session s1 --phase p{n}"));
            // The forge stamps whole seconds: a minute between steps, as agents work.
            w.age_all(60);
        }
        let archive = w.d().join("archive");
        w.ok(&format!("export --to {}", archive.display()));
        w.ok("prune --keep 2 --yes");
        let left = w.ok("list --session s1");
        assert_eq!(phases(&left), ["p4", "p5"], "{name}: {left:#}");

        let imported = w.ok(&format!("import --from {}", archive.display()));
        assert_eq!(imported["posted"], 3, "{name}: {imported:#}");

        let resumed = w.ok("resume --agent a --session s1");
        assert_eq!(resumed["phase"], "p5", "{name}: {resumed:#}");
        let latest = w.ok("latest --agent a");
        assert_eq!(latest["record"]["phase"], "p5", "{name}: {latest:#}");
        let history = w.ok("history --session s1");
        assert_eq!(
            phases(&history),
            ["p1", "p2", "p3", "p4", "p5"],
            "{name}: {history:#}"
        );
        let status = w.ok("status");
        assert_eq!(status["rows"][0]["phase"], "p5", "{name}: {status:#}");
    }
}

/// The same within one second on the forge (whole seconds): p3 carried by a rotation and p2
/// imported after a prune are two copies first posted in one second, their originals gone. The
/// copies rank by their `Time:` lines, not by which was posted last, and the thread, copies
/// ranked before older originals included, still exports.
#[tokio::test(flavor = "multi_thread")]
async fn two_copies_of_one_second_never_rewind_and_the_thread_still_exports() {
    let w = World::forge().await;
    let fake = w.fake.as_ref().unwrap();
    for n in 1..=3 {
        w.ok(&format!("checkpoint --agent e --session z --phase p{n}"));
    }
    {
        let mut s = fake.state();
        let t = s.comments[0].created;
        for c in &mut s.comments {
            c.created = t;
            c.updated = t;
        }
    }
    w.ok("rotate");
    let archive = w.d().join("archive");
    w.ok(&format!("export --to {}", archive.display()));
    w.ok("prune --keep 1 --session z --yes");
    // The original p3 out of reach (deleted here; in life, outside a cold read's window).
    {
        let mut s = fake.state();
        let first = s.issues.iter().map(|i| i.number).min().unwrap();
        let before = s.comments.len();
        s.comments
            .retain(|c| !(c.issue == first && c.body.contains("Phase: p3")));
        assert_eq!(s.comments.len() + 1, before);
        if let Some(row) = s.issue_mut(first) {
            row.comments -= 1;
        }
    }
    w.ok(&format!("import --from {}", archive.display()));
    let resumed = w.ok("resume --agent e --session z");
    assert_eq!(resumed["phase"], "p3", "{resumed:#}");

    let again = w.d().join("again");
    let exported = w.ok(&format!("export --to {}", again.display()));
    assert_eq!(exported["records"], 3, "{exported:#}");
    let from_export =
        crate::common::cli::Bin::new(w.d()).run(&crate::common::cli::words(&format!(
            "--store {} resume --agent e --session z --json",
            again.display()
        )));
    let doc: Value = serde_json::from_slice(&from_export.stdout).unwrap();
    assert_eq!(doc["phase"], "p3", "{doc:#}");
}
