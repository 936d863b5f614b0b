//! Issue #42 low 14, pinned as docs/forge.md states it: the thread's order trusts the clock that
//! stamped each first posting, so an archive from a store whose clock ran ahead, imported within
//! that skew, outranks a record posted between its original and the import (a copy still never
//! ranks after its own comment). Inherent to wall-clock ordering; this test fails if that ever
//! changes (and the doc with it).

use crate::common::seed_line;
use crate::common::world::World;

#[tokio::test(flavor = "multi_thread")]
async fn an_archive_from_a_clock_running_ahead_outranks_later_records_within_the_skew() {
    for w in World::both().await {
        let name = w.name();
        // The archive: a local store written on a machine whose clock runs an hour ahead.
        let ahead = chrono::Utc::now() + chrono::Duration::hours(1);
        let stamp = ahead.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let body = format!(
            "[CHECKPOINT] a\nVersion: 2.0\nPhase: from_ahead\nSession: s\nTime: {stamp}\n\
             Id: 01a2359a-0000-7000-8000-00000000aaaa\n\nState Data:\n```json\n{{}}\n```\n"
        );
        let mut line: serde_json::Value = serde_json::from_str(&seed_line(1, &body)).unwrap();
        line["created_at"] = stamp.clone().into();
        line["updated_at"] = stamp.clone().into();
        let archive = w.d().join("archive");
        std::fs::create_dir_all(&archive).unwrap();
        std::fs::write(archive.join("thread.jsonl"), format!("{line}\n")).unwrap();

        // Here, after the archive's original (in real time), a record is posted.
        w.ok("init");
        w.ok("checkpoint --agent a --session s --phase posted_later");
        // A minute between it and the import (a forge's times cannot split one second).
        w.age_all(60);
        let imported = w.ok(&format!("import --from {}", archive.display()));
        assert_eq!(imported["posted"], 1, "{name}: {imported:#}");

        let resumed = w.ok("resume --agent a --session s");
        assert_eq!(
            resumed["phase"], "from_ahead",
            "{name}: the import ranks by its clock's Posted-At, as docs/forge.md says: {resumed:#}"
        );
    }
}
