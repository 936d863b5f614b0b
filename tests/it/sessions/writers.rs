//! Who writes: a lineage directory keeps one writer for every client over it, and a client
//! made without one writes as a fresh writer.

use forgestate::Client;

#[test]
fn a_directory_keeps_one_writer_and_processes_get_fresh_ones() {
    let store = tempfile::tempdir().unwrap();
    let lineage = tempfile::tempdir().unwrap();
    let kept = || {
        Client::local_as(store.path(), "me")
            .unwrap()
            .with_lineage_dir(lineage.path())
            .with_kept_writer()
            .writer()
            .to_string()
    };
    let first = kept();
    assert_eq!(kept(), first);
    assert!(first.starts_with("w-") && first.len() == 18, "{first}");
    let fresh = || {
        Client::local_as(store.path(), "me")
            .unwrap()
            .with_fresh_writer()
            .writer()
            .to_string()
    };
    assert_ne!(fresh(), fresh());
    assert_ne!(fresh(), first);
}

/// A read never makes the machine's writer (a file, fsynced, on a fresh machine's first
/// command); the first write does, names it on its record, and from then on the machine's
/// reads judge fencing as it: another writer's takeover fences them.
#[tokio::test]
async fn a_read_never_makes_the_machines_writer_and_the_first_write_does() {
    let store = tempfile::tempdir().unwrap();
    let lineage = tempfile::tempdir().unwrap();
    let file = lineage.path().join("writer");
    let machine = || {
        Client::local_as(store.path(), "me")
            .unwrap()
            .with_lineage_dir(lineage.path())
            .with_kept_writer()
    };
    let client = machine();
    let fresh = client.resume("w", "s").await.unwrap();
    assert!(fresh.resume.checkpoint.is_none());
    assert!(!file.exists(), "a read made the machine's writer");
    let record =
        forgestate::format::Record::checkpoint("w", "s", "a", serde_json::json!({})).unwrap();
    let posted = client.save(record).await.posted().unwrap();
    let kept = std::fs::read_to_string(&file).unwrap();
    assert_eq!(posted.record.writer.as_deref(), Some(kept.trim()));
    assert_eq!(machine().writer(), kept.trim());
    // The same client and a new one both read as the kept writer now.
    let other = Client::local_as(store.path(), "me")
        .unwrap()
        .with_fresh_writer();
    other.take_over("w", "s", None).await.unwrap();
    for reader in [&client, &machine()] {
        let err = reader.resume("w", "s").await.unwrap_err();
        assert!(
            matches!(err, forgestate::Error::Fenced { .. }),
            "not fenced: {err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), kept);
}
