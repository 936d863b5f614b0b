//! The read cache written without fsync (`src/mirror/boot.rs`): each of its files cut short is
//! detected and rebuilt from the thread, and a file stamped with another boot of the machine
//! (all a crash before the disk had it could leave: torn, empty or stale) is never read. The
//! answer is right either way.

use super::cached as forge;
use crate::{common, fake_forge};
use std::path::{Path, PathBuf};

use fake_forge::FakeForge;
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::{Value, json};

const W: &str = "implementation-worker";

fn cp(phase: &str, data: Value) -> Record {
    Record::checkpoint(W, "s1", phase, data).unwrap()
}

/// A forge whose thread holds three checkpoints, an hour apart (so a warm read's `since` asks
/// only for the newest again): `s2`'s, then two of `s1`; and a read cache of it with all three
/// files: the base, the delta (the summary) and the base's id index.
async fn cached() -> (FakeForge, tempfile::TempDir) {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path());
    let records = [
        Record::checkpoint(W, "s2", "subtask_1_complete", json!({"n": 0})).unwrap(),
        cp("clone_complete", json!({"n": 1})),
        cp("subtask_2_complete", json!({"n": 2})),
    ];
    for record in records {
        client.save(record).await.posted().unwrap();
    }
    let count = fake.state().comments.len() as i64;
    for (n, c) in fake.state().comments.iter_mut().enumerate() {
        let age = 3600 * (count - n as i64);
        c.created -= age;
        c.updated -= age;
    }
    answers_right(&fake, dir.path()).await;
    for suffix in [".mirror", ".mirror-delta", ".mirror-ids"] {
        file(dir.path(), suffix);
    }
    (fake, dir)
}

/// The cache file whose name ends with `suffix`.
fn file(dir: &Path, suffix: &str) -> PathBuf {
    common::files_under(dir)
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap_or_else(|| panic!("no {suffix} file"))
}

/// A new client (a new process) answers each session's newest checkpoint, whole, and lists
/// every record (the whole mirror read).
async fn answers_right(fake: &FakeForge, dir: &Path) {
    let resumed = forge(fake, dir).resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_2_complete");
    assert_eq!(resumed.resume.data, json!({"n": 2}));
    let resumed = forge(fake, dir).resume(W, "s2").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_1_complete");
    assert_eq!(resumed.resume.data, json!({"n": 0}));
    let listed = forge(fake, dir)
        .list(&Filter::default(), None)
        .await
        .unwrap();
    let phases: Vec<&str> = listed
        .entries
        .iter()
        .map(|e| e.record.phase().unwrap_or_default())
        .collect();
    assert_eq!(
        phases,
        ["subtask_1_complete", "clone_complete", "subtask_2_complete"]
    );
}

/// The comment lists asked for after the first `skip` requests: whether each was whole (no
/// `since`).
async fn whole_reads(fake: &FakeForge, skip: usize) -> Vec<bool> {
    fake.requests()
        .await
        .into_iter()
        .skip(skip)
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        .map(|r| !r.url.query_pairs().any(|(k, _)| k == "since"))
        .collect()
}

#[tokio::test]
async fn each_cache_file_cut_short_is_rebuilt_and_the_answer_is_right() {
    for suffix in [".mirror", ".mirror-delta", ".mirror-ids"] {
        let (fake, dir) = cached().await;
        let path = file(dir.path(), suffix);
        let bytes = std::fs::read(&path).unwrap();
        // The id index: a generation line (32 hex digits) then 16-byte keys; cut inside a key.
        let cut = match suffix {
            ".mirror-ids" => 33 + 16 * ((bytes.len() - 33) / 32) + 8,
            _ => bytes.len() / 2,
        };
        std::fs::write(&path, &bytes[..cut]).unwrap();
        answers_right(&fake, dir.path()).await;
        let rebuilt = std::fs::read(&path).unwrap();
        assert!(rebuilt.len() > cut, "{suffix} was not rebuilt");
        // The rebuilt cache answers again, through `since` reads only.
        let before = fake.requests().await.len();
        answers_right(&fake, dir.path()).await;
        let whole = whole_reads(&fake, before).await;
        assert!(
            !whole.is_empty() && !whole.contains(&true),
            "{suffix}: {whole:?}"
        );
    }
}

/// This boot's name, as the cache stamps its files with it.
#[cfg(target_os = "linux")]
fn this_boot() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap()
        .trim()
        .to_string()
}

/// Rewrites the cache file ending with `suffix`: its boot stamp (which it must hold) to `boot`,
/// and `from` to `to` (the same length).
#[cfg(target_os = "linux")]
fn restamp(dir: &Path, suffix: &str, boot: &str, (from, to): (&str, &str)) {
    let path = file(dir, suffix);
    let delta = suffix == ".mirror-delta";
    let text = match delta {
        true => super::delta_json(&path),
        false => String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
    };
    let stamp = format!(r#""boot":"{}""#, this_boot());
    assert!(
        text.contains(&stamp),
        "{suffix} is not stamped with this boot"
    );
    let text = text
        .replace(&stamp, &format!(r#""boot":"{boot}""#))
        .replace(from, to);
    match delta {
        true => super::write_delta_json(&path, &text),
        false => std::fs::write(&path, text).unwrap(),
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_cache_file_of_another_boot_is_never_read() {
    let other = "00000000-0000-4000-8000-000000000000";
    // A delta that says another phase: read, it answers that phase (so the check below means
    // something); stamped with another boot, it is not read, and the answer is right.
    let changed = ("subtask_1_complete", "subtask_7_complete");
    let (fake, dir) = cached().await;
    restamp(dir.path(), ".mirror-delta", &this_boot(), changed);
    let believed = forge(&fake, dir.path()).resume(W, "s2").await.unwrap();
    assert_eq!(believed.resume.phase, "subtask_7_complete");
    let (fake, dir) = cached().await;
    restamp(dir.path(), ".mirror-delta", other, changed);
    answers_right(&fake, dir.path()).await;
    let delta = std::fs::read_to_string(file(dir.path(), ".mirror-delta")).unwrap();
    assert!(delta.contains(&this_boot()), "the delta was written again");

    // A base of another boot: the thread is read whole, and the base written again.
    let (fake, dir) = cached().await;
    restamp(dir.path(), ".mirror", other, ("", ""));
    let before = fake.requests().await.len();
    answers_right(&fake, dir.path()).await;
    assert!(
        whole_reads(&fake, before).await.contains(&true),
        "the base of another boot was read"
    );
    let base = std::fs::read(file(dir.path(), ".mirror")).unwrap();
    let header = String::from_utf8_lossy(&base[..base.iter().position(|&b| b == b'\n').unwrap()])
        .into_owned();
    assert!(header.contains(&this_boot()), "{header}");
}
