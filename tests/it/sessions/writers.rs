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
