//! `import` and `export` with directories others may touch: an import source others may write,
//! or a symbolic link in place of its thread file, is refused before anything is posted; an
//! export never writes through a symbolic link and writes files only its owner can read.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use forgestate::format::Record;
use forgestate::scan::Filter;
use forgestate::store::THREAD_FILE;
use forgestate::{Category, Client};
use serde_json::json;

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s1", phase, json!({"step": phase})).unwrap()
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// A local store in `dir` holding two checkpoints (as if planted there).
async fn planted(dir: &Path) {
    let c = Client::local_as(dir, "mallory").unwrap();
    for phase in ["clone_complete", "subtask_1_complete"] {
        c.save(cp(phase)).await.posted().unwrap();
    }
}

/// How many records the store in `dir` holds.
async fn held(dir: &Path) -> usize {
    let c = Client::local_as(dir, "me").unwrap();
    c.list(&Filter::default(), None)
        .await
        .unwrap()
        .entries
        .len()
}

#[tokio::test(flavor = "multi_thread")]
async fn import_refuses_a_source_others_may_write() {
    let (source, target) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    planted(source.path()).await;
    let me = Client::local_as(target.path(), "me").unwrap();

    chmod(source.path(), 0o770);
    let e = me.import_from(source.path()).await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains(&source.path().display().to_string())
            && text.contains("writable by others")
            && text.contains("chmod"),
        "names the directory and the fix: {text}"
    );
    assert_eq!(e.category(), Category::Usage, "{e}");

    chmod(source.path(), 0o700);
    let file = source.path().join(THREAD_FILE);
    chmod(&file, 0o662);
    let e = me.import_from(source.path()).await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains(&file.display().to_string())
            && text.contains("writable by others")
            && text.contains(&format!("chmod go-w {}", file.display())),
        "names the thread file and the fix: {text}"
    );
    assert_eq!(held(target.path()).await, 0, "nothing was posted");

    chmod(&file, 0o644);
    assert_eq!(me.import_from(source.path()).await.unwrap().posted, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn import_never_follows_a_symlinked_thread_file() {
    let (elsewhere, source, target) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    planted(elsewhere.path()).await;
    symlink(
        elsewhere.path().join(THREAD_FILE),
        source.path().join(THREAD_FILE),
    )
    .unwrap();
    let me = Client::local_as(target.path(), "me").unwrap();
    let e = me.import_from(source.path()).await.unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(held(target.path()).await, 0, "nothing was posted");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_never_writes_through_a_symlinked_thread_file() {
    let (store, out, victim) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let c = Client::local_as(store.path(), "me").unwrap();
    c.save(cp("clone_complete")).await.posted().unwrap();
    // A link to a file that does not exist yet (export would create it) and to one that does.
    let absent = victim.path().join("absent");
    symlink(&absent, out.path().join(THREAD_FILE)).unwrap();
    let e = c.export_to(out.path()).await.unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(!absent.exists(), "nothing created through the link");

    let present = victim.path().join("present");
    std::fs::write(&present, "kept\n").unwrap();
    std::fs::remove_file(out.path().join(THREAD_FILE)).unwrap();
    symlink(&present, out.path().join(THREAD_FILE)).unwrap();
    let e = c.export_to(out.path()).await.unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&present).unwrap(), "kept\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_writes_files_only_their_owner_can_read() {
    let (store, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let c = Client::local_as(store.path(), "me").unwrap();
    c.save(cp("clone_complete")).await.posted().unwrap();
    chmod(out.path(), 0o755);
    let to = out.path().join("archive").join("s1");
    assert_eq!(c.export_to(&to).await.unwrap().written, 1);
    assert_eq!(mode(&out.path().join("archive")), 0o700);
    assert_eq!(mode(&to), 0o700);
    assert_eq!(mode(&to.join(THREAD_FILE)), 0o600);

    // A thread file an earlier export left readable by anyone is made private by the next.
    chmod(&to.join(THREAD_FILE), 0o644);
    c.save(cp("subtask_1_complete")).await.posted().unwrap();
    assert_eq!(c.export_to(&to).await.unwrap().written, 1);
    assert_eq!(mode(&to.join(THREAD_FILE)), 0o600);
}
