//! Caches are private, or not used (#16): through the real binary on the fake forge, a cache
//! directory others may write (mode 1777), holding a planted issue-number cache and a planted
//! read cache, changes neither where records are posted nor what `resume` answers, and exactly
//! one warning names it; in a private directory, a planted file others may write is ignored;
//! the same plants in a private directory, written by us, are used (so the plants are potent);
//! a directory or files another account owns are not trusted either (run as root: chown).

use crate::{common, fake_forge};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{Bin, parse_ok, stderr, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use serde_json::Value;

const TRUE_PHASE: &str = "subtask_1_complete";
const PLANTED_PHASE: &str = "subtask_9_complete";

/// Runs `line` with `$XDG_CACHE_HOME` = `cache_home` (the cache dir is its `forgestate/`).
fn run(fake: &FakeForge, cwd: &Path, cache_home: &Path, line: &str) -> Output {
    Bin::new(cwd)
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .env("XDG_CACHE_HOME", cache_home.display().to_string())
        .env("XDG_STATE_HOME", cwd.join("state").display().to_string())
        .line(line)
}

fn ok(fake: &FakeForge, cwd: &Path, cache_home: &Path, line: &str) -> (Value, String) {
    let out = run(fake, cwd, cache_home, line);
    (parse_ok(&words(line), &out), stderr(&out))
}

fn resume_phase(fake: &FakeForge, cwd: &Path, cache_home: &Path) -> (String, String) {
    let (v, err) = ok(
        fake,
        cwd,
        cache_home,
        "resume --agent implementation-worker --session s1 --json",
    );
    let phase = v["phase"].as_str().unwrap_or_default().to_string();
    (phase, err)
}

fn checkpoint(fake: &FakeForge, cwd: &Path, cache_home: &Path, phase: &str) -> String {
    let line =
        format!("checkpoint --agent implementation-worker --session s1 --phase {phase} --json");
    ok(fake, cwd, cache_home, &line).1
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

fn named(dir: &Path, suffix: &str) -> PathBuf {
    files(dir)
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap_or_else(|| panic!("no *{suffix} in {}: {:?}", dir.display(), files(dir)))
}

/// The honest cache files (after a checkpoint and a resume) copied into `to` with `mode`.
fn copy_cache(from: &Path, to: &Path, mode: u32) {
    std::fs::create_dir_all(to).unwrap();
    for f in files(from) {
        std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
    }
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Points the issue-number cache in `dir` at `issue`, freshly checked.
fn plant_issue(dir: &Path, issue: u64) -> PathBuf {
    let path = named(dir, ".json");
    let mut entry: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    entry["issue"] = issue.into();
    entry["issue_url"] = Value::Null;
    entry["opened"] = Value::Null;
    entry["checked_at"] = chrono::Utc::now().to_rfc3339().into();
    std::fs::write(&path, serde_json::to_vec(&entry).unwrap()).unwrap();
    path
}

/// Makes the read cache in `dir` claim another phase, with a cursor no answer will move past.
fn plant_mirror(dir: &Path) -> [PathBuf; 2] {
    let base = named(dir, ".mirror");
    let bytes = std::fs::read(&base).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains(TRUE_PHASE), "the mirror holds the record");
    std::fs::write(&base, text.replace(TRUE_PHASE, PLANTED_PHASE)).unwrap();
    let delta = named(dir, ".mirror-delta");
    let mut d: Value = serde_json::from_str(&super::delta_json(&delta)).unwrap();
    d["cursor"] = serde_json::json!({"Since": "2099-01-01T00:00:00Z"});
    // The delta's summary (what a warm `resume` reads) holds the record too.
    let text = serde_json::to_string(&d).unwrap();
    assert!(text.contains(TRUE_PHASE), "the summary holds the record");
    super::write_delta_json(&delta, &text.replace(TRUE_PHASE, PLANTED_PHASE));
    [base, delta]
}

/// `doctor`'s line about the cache.
fn doctor_cache_line(fake: &FakeForge, cwd: &Path, cache_home: &Path) -> String {
    let out = run(fake, cwd, cache_home, "doctor");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains("cache"));
    line.unwrap_or(&text).to_string()
}

fn warnings_naming(err: &str, dir: &Path) -> usize {
    let name = dir.display().to_string();
    err.lines()
        .filter(|l| l.contains("warning") && l.contains(&name))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_world_writable_cache_dir_with_planted_files_changes_nothing_with_one_warning() {
    let fake = FakeForge::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let good = d.join("good");
    checkpoint(&fake, d, &good, TRUE_PHASE);
    assert_eq!(resume_phase(&fake, d, &good).0, TRUE_PHASE);
    let session = fake.open_issues_titled(forgestate::config::DEFAULT_TITLE)[0];
    let decoy = fake.add_issue("an issue another account chose", &[], false);
    let honest = good.join("forgestate");

    // Controls: the same plants in a private directory, written by us, are used.
    let ctl_issue = d.join("ctl_issue");
    copy_cache(&honest, &ctl_issue.join("forgestate"), 0o700);
    plant_issue(&ctl_issue.join("forgestate"), decoy);
    checkpoint(&fake, d, &ctl_issue, "subtask_2_complete");
    assert_eq!(
        fake.comments_on(decoy).len(),
        1,
        "a private cache is trusted"
    );
    let ctl_mirror = d.join("ctl_mirror");
    copy_cache(&honest, &ctl_mirror.join("forgestate"), 0o700);
    plant_mirror(&ctl_mirror.join("forgestate"));
    assert_eq!(resume_phase(&fake, d, &ctl_mirror).0, PLANTED_PHASE);
    // Put the thread back as it was: one record, on the session issue.
    {
        let mut s = fake.state();
        s.comments.retain(|c| c.issue != decoy);
        if let Some(i) = s.issue_mut(decoy) {
            i.comments = 0;
        }
    }

    // The world-writable directory, both plants in it.
    let bad_home = d.join("bad");
    let bad = bad_home.join("forgestate");
    copy_cache(&honest, &bad, 0o1777);
    let planted = [vec![plant_issue(&bad, decoy)], plant_mirror(&bad).to_vec()].concat();
    let before: Vec<Vec<u8>> = planted.iter().map(|p| std::fs::read(p).unwrap()).collect();

    let (phase, err) = resume_phase(&fake, d, &bad_home);
    assert_eq!(phase, TRUE_PHASE, "{err}");
    assert_eq!(warnings_naming(&err, &bad), 1, "{err}");
    assert!(err.contains("writable by others"), "{err}");
    let err = checkpoint(&fake, d, &bad_home, "subtask_2_complete");
    assert_eq!(warnings_naming(&err, &bad), 1, "{err}");
    assert!(
        fake.comments_on(decoy).is_empty(),
        "nothing posted where the plant said"
    );
    assert_eq!(fake.comments_on(session).len(), 2);
    let (phase, _) = resume_phase(&fake, d, &bad_home);
    assert_eq!(phase, "subtask_2_complete");
    let after: Vec<Vec<u8>> = planted.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(
        before == after,
        "planted files are neither used nor rewritten"
    );

    // doctor says why the cache is not used.
    let line = doctor_cache_line(&fake, d, &bad_home);
    assert!(
        line.contains("not used") && line.contains("writable by others"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn in_a_private_dir_a_cache_file_others_may_write_is_ignored() {
    let fake = FakeForge::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let good = d.join("good");
    checkpoint(&fake, d, &good, TRUE_PHASE);
    assert_eq!(resume_phase(&fake, d, &good).0, TRUE_PHASE);
    let session = fake.open_issues_titled(forgestate::config::DEFAULT_TITLE)[0];
    let decoy = fake.add_issue("an issue another account chose", &[], false);

    let home = d.join("shared_files");
    let dir = home.join("forgestate");
    copy_cache(&good.join("forgestate"), &dir, 0o700);
    let mut planted = plant_mirror(&dir).to_vec();
    planted.push(plant_issue(&dir, decoy));
    for p in &planted {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let (phase, err) = resume_phase(&fake, d, &home);
    assert_eq!(phase, TRUE_PHASE, "{err}");
    checkpoint(&fake, d, &home, "subtask_2_complete");
    assert!(fake.comments_on(decoy).is_empty());
    assert_eq!(fake.comments_on(session).len(), 2);
    assert_eq!(resume_phase(&fake, d, &home).0, "subtask_2_complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_dir_or_cache_file_another_account_owns_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    {
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata(d).unwrap().uid() != 0 {
            // Handing a file to another account takes root; the mode tests above still run.
            eprintln!("not run: only root can make a file another account's");
            return;
        }
    }
    let fake = FakeForge::start().await;
    let good = d.join("good");
    checkpoint(&fake, d, &good, TRUE_PHASE);
    assert_eq!(resume_phase(&fake, d, &good).0, TRUE_PHASE);
    let session = fake.open_issues_titled(forgestate::config::DEFAULT_TITLE)[0];
    let decoy = fake.add_issue("an issue another account chose", &[], false);
    let plant = |name: &str| {
        let home = d.join(name);
        let dir = home.join("forgestate");
        copy_cache(&good.join("forgestate"), &dir, 0o700);
        let mut planted = plant_mirror(&dir).to_vec();
        planted.push(plant_issue(&dir, decoy));
        (home, dir, planted)
    };

    // The directory is another account's (mode 0700, but not ours).
    let (home, dir, _) = plant("theirs");
    std::os::unix::fs::chown(&dir, Some(4242), Some(4242)).unwrap();
    let (phase, err) = resume_phase(&fake, d, &home);
    assert_eq!(phase, TRUE_PHASE, "{err}");
    assert_eq!(warnings_naming(&err, &dir), 1, "{err}");
    assert!(err.contains("owned by uid 4242"), "{err}");
    checkpoint(&fake, d, &home, "subtask_2_complete");
    assert!(fake.comments_on(decoy).is_empty());

    // The directory is ours; the files in it are another account's.
    let (home, _, planted) = plant("their_files");
    for p in &planted {
        std::os::unix::fs::chown(p, Some(4242), Some(4242)).unwrap();
    }
    assert_eq!(resume_phase(&fake, d, &home).0, "subtask_2_complete");
    checkpoint(&fake, d, &home, "subtask_3_complete");
    assert!(fake.comments_on(decoy).is_empty());
    assert_eq!(fake.comments_on(session).len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_dir_its_owner_may_not_write_is_named_by_doctor_and_not_used() {
    let fake = FakeForge::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let home = d.join("home");
    checkpoint(&fake, d, &home, TRUE_PHASE);
    let dir = home.join("forgestate");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).unwrap();

    let line = doctor_cache_line(&fake, d, &home);
    assert!(
        line.contains("not used") && line.contains("not writable by you (mode 500)"),
        "{line}"
    );
    let (phase, err) = resume_phase(&fake, d, &home);
    assert_eq!(phase, TRUE_PHASE, "{err}");
    assert_eq!(warnings_naming(&err, &dir), 1, "{err}");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
}
