//! The read cache (`src/mirror`) on the fake forge and the local store: a warm read asks only
//! for what changed and still sees new, edited and untrusted comments; a deletion the comment
//! count cannot show goes after the resync age or `refresh`; a corrupt cache is rebuilt with one
//! warning and the same answer; the cached login follows the token in use; the local store's
//! offset index notices a rewritten file, and an in-place edit of the same length.

use super::{cached_as as forge, uncached_as as uncached};
use crate::{common, fake_forge};
use std::path::{Path, PathBuf};
use std::time::Duration;

use fake_forge::{BOT_TOKEN, FakeForge, MALLORY_TOKEN};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::{Record, Renderer};
use forgestate::mirror::ReadCache;
use forgestate::scan::{Filter, Scan};
use serde_json::{Value, json};

const W: &str = "implementation-worker";

fn cp(phase: &str, data: Value) -> Record {
    Record::checkpoint(W, "s1", phase, data).unwrap()
}

fn body(record: &Record) -> String {
    Renderer::embedded().unwrap().render(record).unwrap()
}

/// What a list answered, comparable across clients: entries and rejections with their comments.
fn summary(s: &Scan) -> Value {
    let entries: Vec<Value> = s
        .entries
        .iter()
        .map(|e| json!([e.comment.id, e.comment.author, e.comment.edited, e.record]))
        .collect();
    let rejected: Vec<Value> = s
        .rejected
        .iter()
        .map(|r| json!([r.comment.id, r.comment.author, r.code.code(), r.reason]))
        .collect();
    json!({"entries": entries, "rejected": rejected})
}

/// The comment-list requests the fake received after the first `skip`, as their query strings.
async fn comment_reads(fake: &FakeForge, skip: usize) -> Vec<String> {
    fake.requests()
        .await
        .into_iter()
        .skip(skip)
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        .map(|r| r.url.query().unwrap_or_default().to_string())
        .collect()
}

/// The `since` of each comment list asked for after the first `skip` requests, as unix
/// seconds (`None`: the whole list).
async fn comment_sinces(fake: &FakeForge, skip: usize) -> Vec<Option<i64>> {
    fake.requests()
        .await
        .into_iter()
        .skip(skip)
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
        .map(|r| {
            let since = r.url.query_pairs().find(|(k, _)| k == "since")?.1;
            chrono::DateTime::parse_from_rfc3339(&since)
                .ok()
                .map(|t| t.timestamp())
        })
        .collect()
}

async fn user_asks(fake: &FakeForge, skip: usize) -> usize {
    fake.requests()
        .await
        .into_iter()
        .skip(skip)
        .filter(|r| r.url.path().ends_with("/user"))
        .count()
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    common::files_under(dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.ends_with(".mirror") || name.ends_with(".mirror-delta")
        })
        .collect()
}

#[tokio::test]
async fn a_warm_read_sends_one_since_query_and_sees_new_edited_and_untrusted_comments() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let first = forge(&fake, BOT_TOKEN, dir.path());
    for (phase, n) in [("clone_complete", 1), ("subtask_1_complete", 2)] {
        first
            .save(cp(phase, json!({"n": n})))
            .await
            .posted()
            .unwrap();
    }
    let cold = first.resume(W, "s1").await.unwrap();
    assert_eq!(cold.resume.phase, "subtask_1_complete");
    assert_eq!(cache_files(dir.path()).len(), 2, "the read left a mirror");

    // Meanwhile: a new checkpoint, an edit of the first one, and mallory's "newer" checkpoint.
    let edited = fake.comments_on(issue)[0].id;
    {
        let mut s = fake.state();
        let now = s.now();
        let c = s.comments.iter_mut().find(|c| c.id == edited).unwrap();
        c.body = body(&cp("clone_complete", json!({"n": 100})));
        c.created = now - 60; // posted a minute ago, edited now
        c.updated = now;
    }
    fake.add_comment(issue, "mallory", &body(&cp("pr_created", json!({}))));
    fake.add_comment(
        issue,
        "ca-bot",
        &body(&cp("subtask_2_complete", json!({"n": 3}))),
    );

    // A new process (a new client over the same cache directory) resumes.
    let before = fake.requests().await.len();
    let warm = forge(&fake, BOT_TOKEN, dir.path());
    let resumed = warm.resume(W, "s1").await.unwrap();
    let reads = comment_reads(&fake, before).await;
    // The list, and the session issue (its comment count shows a deletion) at the same time.
    let asked: Vec<String> = fake.requests().await[before..]
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert_eq!(asked.len(), 2, "two requests in all: {asked:?}");
    assert!(
        asked
            .iter()
            .any(|p| p.ends_with(&format!("/issues/{issue}"))),
        "{asked:?}"
    );
    assert_eq!(reads.len(), 1);
    assert!(
        reads[0].contains("since="),
        "the warm read asks since: {reads:?}"
    );
    assert_eq!(
        user_asks(&fake, before).await,
        0,
        "the login came from the cache"
    );
    assert_eq!(resumed.resume.phase, "subtask_2_complete");
    assert_eq!(resumed.resume.data["n"], 3);
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);

    // Every answer is the uncached one: the edit replaced its comment, mallory is untrusted.
    let listed = warm.list(&Filter::default(), None).await.unwrap();
    let plain = uncached(&fake, BOT_TOKEN, dir.path())
        .list(&Filter::default(), None)
        .await
        .unwrap();
    assert_eq!(summary(&listed), summary(&plain));
    let first_entry = &listed.entries[0];
    assert_eq!(first_entry.comment.id, Some(edited));
    assert_eq!(first_entry.record.data()["n"], 100);
    assert!(first_entry.comment.edited);
    assert_eq!(listed.entries.len(), 3);
    assert!(
        listed
            .rejected
            .iter()
            .any(|r| r.comment.author == "mallory" && r.code.code() == "untrusted")
    );
}

#[tokio::test]
async fn a_comment_deleted_on_the_server_disappears_after_the_resync_age_or_a_refresh() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, BOT_TOKEN, dir.path());
    for phase in ["clone_complete", "subtask_1_complete"] {
        client.save(cp(phase, json!({}))).await.posted().unwrap();
    }
    assert_eq!(
        client.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    // A deletion the head's comment count cannot show (the row removed, the count left as it
    // was: as if another comment had been posted and not listed yet). A real deletion goes at
    // the next read (`deleted.rs`).
    let gone = fake.comments_on(issue)[1].id;
    fake.state().comments.retain(|c| c.id != gone);

    // Within the resync age, `since` cannot see that.
    let young = forge(&fake, BOT_TOKEN, dir.path());
    assert_eq!(
        young.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );

    // Past it, the read is a full one and the comment is gone.
    let before = fake.requests().await.len();
    let aged = fake_forge::client(&fake, BOT_TOKEN, dir.path())
        .read_cache(ReadCache {
            enabled: true,
            resync_after: Duration::ZERO,
        })
        .build()
        .unwrap();
    assert_eq!(
        aged.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
    );
    // A full read lists every comment since before the head was created (the repository-wide
    // list, which holds the head's whole list), not since the last read.
    let reads = comment_sinces(&fake, before).await;
    let first = fake.comments_on(issue)[0].created;
    assert!(
        reads.iter().any(|t| t.is_none_or(|t| t < first)),
        "{reads:?}"
    );

    // `refresh` does the same whatever the age.
    let keep = fake.comments_on(issue)[0].id;
    client
        .save(cp("subtask_9_complete", json!({})))
        .await
        .posted()
        .unwrap();
    assert_eq!(
        client.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_9_complete"
    );
    fake.state().comments.retain(|c| c.id == keep);
    client.refresh();
    assert_eq!(
        client.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
    );
}

async fn corrupted_cache_is_rebuilt(which: &str, damage: impl Fn(&Path)) {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, BOT_TOKEN, dir.path());
    for phase in ["clone_complete", "subtask_1_complete"] {
        client
            .save(cp(phase, json!({"k": phase})))
            .await
            .posted()
            .unwrap();
    }
    let clean = client.list(&Filter::default(), None).await.unwrap();
    // One more comment, so the delta file holds something too.
    client
        .save(cp("subtask_2_complete", json!({})))
        .await
        .posted()
        .unwrap();
    let clean = {
        let again = client.list(&Filter::default(), None).await.unwrap();
        assert_eq!(again.entries.len(), clean.entries.len() + 1);
        again
    };
    let file = cache_files(dir.path())
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(which))
        .unwrap();
    damage(&file);

    let fresh = forge(&fake, BOT_TOKEN, dir.path());
    let listed = fresh.list(&Filter::default(), None).await.unwrap();
    let warned: Vec<&String> = listed
        .warnings
        .iter()
        .filter(|w| w.contains("read cache"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", listed.warnings);
    assert!(warned[0].contains("rebuilt"), "{warned:?}");
    assert_eq!(summary(&listed), summary(&clean));
    let resumed = fresh.resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_2_complete");
    assert!(resumed.warnings.is_empty(), "warned once only");
}

#[tokio::test]
async fn a_corrupted_base_file_is_rebuilt_with_one_warning_and_the_same_answer() {
    corrupted_cache_is_rebuilt(".mirror", |path| {
        let mut bytes = std::fs::read(path).unwrap();
        let len = bytes.len();
        bytes.truncate(len / 2);
        bytes.extend_from_slice(b"\x00garbage{");
        std::fs::write(path, bytes).unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_corrupted_delta_file_is_rebuilt_with_one_warning_and_the_same_answer() {
    corrupted_cache_is_rebuilt(".mirror-delta", |path| {
        std::fs::write(path, b"{\"schema\": 1, \"slots\": [tru").unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_byte_changed_in_the_delta_is_caught_before_a_warm_resume_believes_it() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, BOT_TOKEN, dir.path());
    client
        .save(cp("clone_complete", json!({})))
        .await
        .posted()
        .unwrap();
    client.resume(W, "s1").await.unwrap();
    client
        .save(cp("subtask_2_complete", json!({})))
        .await
        .posted()
        .unwrap();
    // A warm read: the delta's summary now holds the newest checkpoint.
    assert_eq!(
        client.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_2_complete"
    );
    let delta = cache_files(dir.path())
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".mirror-delta"))
        .unwrap();
    // One digit changed, as a bad sector or a stray edit would: the same length, valid JSON.
    let text = String::from_utf8(std::fs::read(&delta).unwrap()).unwrap();
    assert!(text.contains("subtask_2_complete"), "the summary holds it");
    std::fs::write(
        &delta,
        text.replace("subtask_2_complete", "subtask_9_complete"),
    )
    .unwrap();

    let fresh = forge(&fake, BOT_TOKEN, dir.path());
    let resumed = fresh.resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_2_complete");
    assert!(
        resumed
            .warnings
            .iter()
            .any(|w| w.contains("read cache") && w.contains("checksum")),
        "{:?}",
        resumed.warnings
    );
    // Rebuilt: the next warm read believes the cache again, without a warning.
    let again = fresh.resume(W, "s1").await.unwrap();
    assert_eq!(again.resume.phase, "subtask_2_complete");
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

#[tokio::test]
async fn a_delta_of_the_schema_before_checksums_is_rebuilt_without_a_warning() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, BOT_TOKEN, dir.path());
    client
        .save(cp("clone_complete", json!({})))
        .await
        .posted()
        .unwrap();
    client.resume(W, "s1").await.unwrap();
    let delta = cache_files(dir.path())
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".mirror-delta"))
        .unwrap();
    // What the previous version wrote: the JSON alone, schema 3.
    std::fs::write(
        &delta,
        br#"{"schema":3,"generation":"g","cursor":null,"salt":"","login":null,"slots":[]}"#,
    )
    .unwrap();
    let resumed = forge(&fake, BOT_TOKEN, dir.path())
        .resume(W, "s1")
        .await
        .unwrap();
    assert_eq!(resumed.resume.phase, "clone_complete");
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
    let text = std::fs::read_to_string(&delta).unwrap();
    assert_eq!(text.split_once('\n').map(|(sum, _)| sum.len()), Some(64));
}

#[tokio::test]
async fn another_token_asks_the_forge_who_it_is_and_trust_follows_it() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bot = forge(&fake, BOT_TOKEN, dir.path());
    bot.save(cp("clone_complete", json!({})))
        .await
        .posted()
        .unwrap();
    bot.resume(W, "s1").await.unwrap();

    let before = fake.requests().await.len();
    let again = forge(&fake, BOT_TOKEN, dir.path());
    assert_eq!(
        again.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
    );
    assert_eq!(user_asks(&fake, before).await, 0);

    let before = fake.requests().await.len();
    // Mallory's own forgestate, trusting no one else.
    let mallory = fake_forge::client_trusting(&fake.uri(), MALLORY_TOKEN, dir.path())
        .read_cache(ReadCache {
            enabled: true,
            resync_after: Duration::from_secs(3600),
        })
        .build()
        .unwrap();
    // ca-bot's issue and records are not mallory's: as on a cold read, no session thread.
    let resumed = mallory.resume(W, "s1").await;
    assert_eq!(
        user_asks(&fake, before).await,
        1,
        "a new token is asked about"
    );
    let err = resumed.expect_err("ca-bot's records are not mallory's");
    assert!(err.to_string().contains("no open issue titled"), "{err}");

    // The files hold neither the token nor its plain SHA-256.
    use sha2::Digest;
    let plain: String = sha2::Sha256::digest(BOT_TOKEN.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for file in cache_files(dir.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains(BOT_TOKEN) && !text.contains(MALLORY_TOKEN));
        assert!(
            !text.contains(&plain),
            "{} holds an unsalted hash",
            file.display()
        );
    }
}

#[tokio::test]
async fn answers_are_the_same_with_the_cache_off() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let cached = forge(&fake, BOT_TOKEN, dir.path());
    let plain = uncached(&fake, BOT_TOKEN, dir.path());
    for n in 0..5 {
        cached
            .save(cp(&format!("subtask_{n}_complete"), json!({"n": n})))
            .await
            .posted()
            .unwrap();
        let a = cached.list(&Filter::default(), None).await.unwrap();
        let b = plain.list(&Filter::default(), None).await.unwrap();
        assert_eq!(summary(&a), summary(&b));
        let a = cached.resume(W, "s1").await.unwrap();
        let b = plain.resume(W, "s1").await.unwrap();
        assert_eq!(a.resume.phase, b.resume.phase);
        assert_eq!(a.resume.data, b.resume.data);
    }
    assert!(plain.read_cache_path().is_none());
    assert!(cached.read_cache_path().is_some_and(Path::exists));
}

// ---- The local store's index ----

fn local(dir: &Path) -> Client<AnyThread> {
    Client::local_as(dir, "tester").unwrap()
}

#[tokio::test]
async fn a_local_read_picks_up_lines_appended_after_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let a = local(dir.path());
    a.save(cp("clone_complete", json!({})))
        .await
        .posted()
        .unwrap();
    assert_eq!(
        a.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
    );
    assert!(dir.path().join(".thread.mirror").exists());
    // Another process appends.
    let b = local(dir.path()).without_read_cache();
    b.save(cp("subtask_1_complete", json!({"x": 1})))
        .await
        .posted()
        .unwrap();
    let resumed = local(dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_1_complete");
    assert_eq!(resumed.resume.data["x"], 1);
}

#[tokio::test]
async fn lines_before_the_offset_are_not_read_again_after_an_append() {
    let dir = tempfile::tempdir().unwrap();
    let c = local(dir.path());
    for phase in ["clone_complete", "subtask_1_complete", "subtask_2_complete"] {
        c.save(cp(phase, json!({"pad": "x".repeat(300)})))
            .await
            .posted()
            .unwrap();
    }
    c.list(&Filter::default(), None).await.unwrap();
    // Damage the first line in place, far from the end, then append: the append is read after
    // the offset, and a read that re-parsed the first line would reject it.
    let file = dir.path().join("thread.jsonl");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[2] = b'#';
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
        .unwrap();
    local(dir.path())
        .without_read_cache()
        .save(cp("subtask_3_complete", json!({})))
        .await
        .posted()
        .unwrap();
    let listed = local(dir.path())
        .list(&Filter::default(), None)
        .await
        .unwrap();
    assert_eq!(listed.entries.len(), 4, "{:?}", listed.warnings);
    // Without the cache, the damage shows.
    let plain = local(dir.path()).without_read_cache();
    let listed = plain.list(&Filter::default(), None).await.unwrap();
    assert_eq!(listed.entries.len(), 3);
}

#[tokio::test]
async fn an_in_place_edit_of_the_same_length_is_noticed_without_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let c = local(dir.path());
    c.save(cp("subtask_1_complete", json!({})))
        .await
        .posted()
        .unwrap();
    // Another session's records after it: the edit lies far before the end of the file.
    for n in 0..3 {
        let other = Record::checkpoint(
            W,
            "s2",
            "clone_complete",
            json!({"n": n, "pad": "x".repeat(300)}),
        )
        .unwrap();
        c.save(other).await.posted().unwrap();
    }
    assert_eq!(
        local(dir.path())
            .resume(W, "s1")
            .await
            .unwrap()
            .resume
            .phase,
        "subtask_1_complete"
    );
    let file = dir.path().join("thread.jsonl");
    let inode = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).unwrap().ino()
    };
    let (before, len) = (inode(&file), std::fs::metadata(&file).unwrap().len());
    let text = std::fs::read_to_string(&file).unwrap();
    let at = text.find("subtask_1_complete").unwrap();
    assert!(
        len as usize - at > 1000,
        "the edit is not in the hashed tail"
    );
    // Written in place (no truncation), a moment later than the read.
    std::thread::sleep(Duration::from_millis(30));
    let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(at as u64)).unwrap();
    std::io::Write::write_all(&mut f, b"subtask_7_complete").unwrap();
    drop(f);
    assert_eq!(
        (inode(&file), std::fs::metadata(&file).unwrap().len()),
        (before, len)
    );
    let resumed = local(dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_7_complete");
}

#[tokio::test]
async fn a_rewritten_or_truncated_local_file_invalidates_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let c = local(dir.path());
    for phase in ["clone_complete", "subtask_1_complete", "subtask_2_complete"] {
        c.save(cp(phase, json!({}))).await.posted().unwrap();
    }
    assert_eq!(
        c.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_2_complete"
    );
    let file = dir.path().join("thread.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();

    // Truncated in place to its first line.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_len(lines[0].len() as u64 + 1))
        .unwrap();
    assert_eq!(
        local(dir.path())
            .resume(W, "s1")
            .await
            .unwrap()
            .resume
            .phase,
        "clone_complete"
    );

    // Replaced by a new file (as `prune` does) holding the first two lines.
    let new = dir.path().join("thread.jsonl.new");
    std::fs::write(&new, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    std::fs::rename(&new, &file).unwrap();
    assert_eq!(
        local(dir.path())
            .resume(W, "s1")
            .await
            .unwrap()
            .resume
            .phase,
        "subtask_1_complete"
    );

    // Rewritten in place to the same length with another last line.
    let swapped = lines[1].replace("subtask_1_complete", "subtask_7_complete");
    assert_eq!(swapped.len(), lines[1].len());
    std::fs::write(&file, format!("{}\n{}\n", lines[0], swapped)).unwrap();
    let resumed = local(dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_7_complete");
}
