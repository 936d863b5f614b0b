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
