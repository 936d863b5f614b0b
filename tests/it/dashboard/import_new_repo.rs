//! `import --from DIR` into a repository that has no session issue yet (a team's store moved to
//! a new forge repository): the import creates the issue, as the first checkpoint would, and
//! posts every record on it; run again, it posts nothing.

use crate::common::world::World;

#[tokio::test(flavor = "multi_thread")]
async fn import_into_a_repository_with_no_session_issue_creates_it() {
    let from = World::local();
    for n in 1..=3 {
        from.ok(&format!("checkpoint --agent a --session s1 --phase p{n}"));
    }
    from.ok("health --agent a --session s1");
    let archive = from.d().join("archive");
    from.ok(&format!("export --to {}", archive.display()));

    let to = World::forge().await;
    let fake = to.fake.as_ref().unwrap();
    assert!(fake.state().issues.is_empty(), "a new repository");
    let imported = to.ok(&format!("import --from {}", archive.display()));
    assert_eq!(imported["posted"], 4, "{imported:#}");
    {
        let state = fake.state();
        assert_eq!(
            state.issues.len(),
            1,
            "one session issue, created by the import"
        );
        assert!(!state.issues[0].closed);
    }
    assert_eq!(to.records(), 4, "every record is on it");

    let resumed = to.ok("resume --agent a --session s1");
    assert_eq!(resumed["phase"], "p3", "{resumed:#}");
    let again = to.ok(&format!("import --from {}", archive.display()));
    assert_eq!(
        (again["posted"].as_u64(), again["already"].as_u64()),
        (Some(0), Some(4))
    );
    assert_eq!(fake.state().issues.len(), 1);
}
