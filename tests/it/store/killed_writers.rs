//! Crash safety: the real binary SIGKILLed while records are spooling, posting and flushing
//! (located by the `stage:` lines it logs under `-v`), and many writers and flushers at once
//! against a forge that fails 30% of requests.

#![cfg(unix)]

use super::killed_writers_harness as harness;
use crate::fake_forge;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use forgestate::format::parse;
use serde_json::Value;

use fake_forge::{FakeForge, Fault};
use harness::*;

/// Kills aimed at each stage.
const KILLS_PER_STAGE: usize = 8;
/// How long the forge takes to answer, after doing the work, while posting and flushing are
/// targeted.
const LATENCY: Duration = Duration::from_millis(300);
/// How long a request takes to reach the forge (see [`slow_link`]).
const HOLD: Duration = Duration::from_millis(150);
/// After its stage marker, how long to wait before each kill: the first two land before the
/// forge has seen the post, the last two after it committed it and before it answered.
const KILL_DELAYS: [Duration; 4] = [
    Duration::ZERO,
    Duration::from_millis(60),
    Duration::from_millis(250),
    Duration::from_millis(350),
];

/// What the kills did, and the records the invariants are about.
#[derive(Default)]
struct Tally {
    /// Kills that landed inside each stage (the last marker was that stage's start).
    landed: BTreeMap<&'static str, usize>,
    /// Kills aimed at each stage.
    aimed: BTreeMap<&'static str, usize>,
    /// Records whose `checkpoint` exited 0.
    exited_zero: BTreeSet<String>,
    /// Records seen in the outbox at any time.
    spooled: BTreeSet<String>,
    /// Temp files seen in the outbox at any time (left by a kill mid-write).
    temp_files: BTreeSet<String>,
}

impl Tally {
    /// Books a run aimed at `stage`, then looks at the outbox it left.
    fn book(&mut self, stage: &'static str, run: &Run, dir: &Path) {
        *self.aimed.entry(stage).or_insert(0) += 1;
        if run.killed {
            if run.last.as_deref() == Some(stage) {
                *self.landed.entry(stage).or_insert(0) += 1;
            }
        } else {
            assert_eq!(run.code, Some(0), "{}", run.stderr);
            // A checkpoint that beat its kill prints its record (`flush` prints no JSON).
            if let Ok(doc) = serde_json::from_str::<Value>(&run.stdout) {
                let id = doc["id"].as_str().expect("a saved record has an id");
                self.exited_zero.insert(id.to_string());
            }
        }
        self.look(dir);
    }

    fn look(&mut self, dir: &Path) {
        self.spooled.extend(ids_in_outbox(dir));
        for (_, name) in outbox_files(dir) {
            if name.starts_with(".tmp-") {
                self.temp_files.insert(name);
            }
        }
    }

    /// Runs a checkpoint to the end (it is not killed) and books its id.
    fn checkpoint(&mut self, uri: &str, dir: &Path, line: &str) {
        let out = command(uri, dir, line).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        self.exited_zero
            .insert(doc["id"].as_str().unwrap().to_string());
        self.look(dir);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkills_while_spooling_posting_and_flushing_lose_nothing_and_post_nothing_twice() {
    let started = Instant::now();
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let issue = setup(
        &fake,
        d,
        "[forge]\nretry_budget_secs = 1\nquick_timeout_ms = 300\nrequest_timeout_secs = 5\n",
    );
    let uri = slow_link(fake.addr(), HOLD).await;
    // Warm the cache (the issue number) so every run is about saving, not discovery.
    let out = command(&uri, d, "init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut tally = Tally::default();
    let checkpoint =
        |i: usize| format!("-v checkpoint --agent w --session s --phase k{i} --set i={i} --json");
    let delay = |i: usize| KILL_DELAYS[i % KILL_DELAYS.len()];

    // Posting: the outbox is empty and the forge slow, so each checkpoint posts directly and
    // is killed while its post is on the wire (before the forge saw it, or after it committed
    // the comment but before it answered).
    fake.state().latency = LATENCY;
    for i in 0..KILLS_PER_STAGE {
        let run = kill_in_stage(command(&uri, d, &checkpoint(i)), "posting", delay(i));
        tally.book("posting", &run, d);
    }
    // A save writes ahead: a checkpoint killed while posting leaves its record in the queue
    // (posted or not), which a later flush posts once or finds already posted.
    let left = outbox_entries(d).len();
    assert!(left <= KILLS_PER_STAGE, "only the killed ones wait: {left}");
    // Whatever those posts committed is in the thread now, and what they did not is in the
    // outbox; nothing below posts new records except through the outbox.
    let mut posted_by_killed: BTreeSet<String> = ids_in_thread(&fake, issue).into_keys().collect();
    posted_by_killed.extend(ids_in_outbox(d));

    // Spooling: the forge is down. The first checkpoint spools after its failed post; with
    // the outbox non-empty every later one spools first, so a kill on the marker lands inside
    // the write. Completed checkpoints between the kills fill the queue for the flush kills.
    fake.state().latency = Duration::ZERO;
    fake.state().down = true;
    for i in 100..100 + KILLS_PER_STAGE + 4 {
        tally.checkpoint(&uri, d, &checkpoint(i));
    }
    for i in 200..200 + KILLS_PER_STAGE {
        let run = kill_in_stage(command(&uri, d, &checkpoint(i)), "spooling", Duration::ZERO);
        tally.book("spooling", &run, d);
    }
    let waiting = outbox_entries(d).len();
    assert!(waiting > KILLS_PER_STAGE, "only {waiting} records wait");

    // Flushing: the forge is up but slow; each flush is killed while it posts an entry, either
    // before the forge saw the post (the entry must stay) or after the forge committed it (the
    // entry stays too, and the next flush must find it in the thread and not post it again).
    fake.state().down = false;
    fake.state().latency = LATENCY;
    let (mut committed_but_waiting, mut unseen_and_waiting) = (0, 0);
    for i in 0..KILLS_PER_STAGE {
        let run = kill_in_stage(command(&uri, d, "-v flush"), "flushing", delay(i));
        tally.book("flushing", &run, d);
        let target = run
            .last_line
            .as_deref()
            .filter(|_| run.killed && run.last.as_deref() == Some("flushing"))
            .and_then(|l| l.strip_prefix("flushing "));
        let Some(body) = target.and_then(|path| std::fs::read_to_string(path).ok()) else {
            continue;
        };
        let id = parse(&body).unwrap().id.unwrap();
        if ids_in_thread(&fake, issue).contains_key(&id) {
            committed_but_waiting += 1;
        } else {
            unseen_and_waiting += 1;
        }
    }

    eprintln!(
        "kills aimed {:?}, landed inside {:?}; flush kills left {} entries the forge had \
         committed and {} it had not seen; {} temp file(s) left by kills; {} exited 0, {} spooled",
        tally.aimed,
        tally.landed,
        committed_but_waiting,
        unseen_and_waiting,
        tally.temp_files.len(),
        tally.exited_zero.len(),
        tally.spooled.len(),
    );
    for stage in ["spooling", "posting", "flushing"] {
        assert!(
            tally.landed.get(stage).copied().unwrap_or(0) >= 1,
            "no kill landed while {stage}: {:?}",
            tally.landed
        );
    }
    assert!(
        committed_but_waiting >= 1 && unseen_and_waiting >= 1,
        "flush kills must land both before and after the forge commits: {committed_but_waiting} \
         after, {unseen_and_waiting} before"
    );

    // Temp files are never entries: a half-written one and a complete copy of a waiting
    // entry, both as a writer killed before its rename leaves them.
    let entry = outbox_entries(d).into_iter().next().expect("entries wait");
    let body = std::fs::read_to_string(&entry).unwrap();
    let ob = entry.parent().unwrap();
    std::fs::write(ob.join(".tmp-1-0-1"), &body[..body.len() / 2]).unwrap();
    std::fs::write(ob.join(".tmp-1-1-1"), &body).unwrap();

    fake.state().latency = Duration::ZERO;
    let out = command(&uri, d, "flush").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        outbox_entries(d).is_empty(),
        "the final flush empties the outbox"
    );
    let dead = dead_letters(d);
    assert!(dead.is_empty(), "nothing is a dead letter: {dead:?}");

    let ids = ids_in_thread(&fake, issue);
    let twice: Vec<_> = ids.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "posted more than once: {twice:?}");
    for id in tally.exited_zero.iter().chain(&tally.spooled) {
        assert_eq!(
            ids.get(id),
            Some(&1),
            "record {id} exited 0 or was spooled, so it must be in the thread once"
        );
    }
    for id in ids.keys() {
        assert!(
            posted_by_killed.contains(id)
                || tally.exited_zero.contains(id)
                || tally.spooled.contains(id),
            "record {id} came from nowhere (a temp file taken for an entry?)"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sixteen_writers_and_two_flushers_against_a_flaky_forge_post_each_record_once() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let issue = setup(
        &fake,
        d,
        "[forge]\nretry_budget_secs = 3\nquick_timeout_ms = 500\nrequest_timeout_secs = 2\n",
    );
    // Warm the cache (the issue number) so the run is about posting, not discovery.
    let out = command(&fake.uri(), d, "init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    fake.state().fail_rate = 0.3;
    // The first posts fail for certain, two of them after committing: how many random failures
    // land depends on the machine's load (a writer that spools early sends less), and the
    // run must meet both kinds whatever the load.
    for fault in [
        Fault::CommitThenFail,
        Fault::Status(502),
        Fault::CommitThenFail,
        Fault::Status(502),
        Fault::Status(502),
    ] {
        fake.inject("/comments", fault);
    }

    let uri = fake.uri();
    let results: Vec<(bool, Output)> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for i in 0..16 {
            let uri = uri.clone();
            handles.push(s.spawn(move || {
                let line =
                    format!("checkpoint --agent w{i} --session s --phase p --set i={i} --json");
                (true, command(&uri, d, &line).output().unwrap())
            }));
        }
        for _ in 0..2 {
            let uri = uri.clone();
            handles.push(s.spawn(move || (false, command(&uri, d, "flush").output().unwrap())));
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ids = Vec::new();
    let mut spooled = BTreeSet::new();
    for (is_checkpoint, out) in &results {
        if *is_checkpoint {
            assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
            assert!(
                !stderr(out).contains("forgestate: error:"),
                "transient trouble is not an error to fix: {}",
                stderr(out)
            );
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            ids.push(doc["id"].as_str().unwrap().to_string());
        }
    }
    spooled.extend(ids_in_outbox(d));
    let (failed, ambiguous) = {
        let s = fake.state();
        (s.failed, s.committed_then_failed)
    };
    assert!(
        failed >= 5 && ambiguous >= 1,
        "the forge really was flaky: {failed} failures, {ambiguous} ambiguous"
    );
    fake.state().fail_rate = 0.0;
    let out = command(&fake.uri(), d, "flush").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(outbox_entries(d).is_empty());
    assert_eq!(dead_letters(d), Vec::<PathBuf>::new());

    let in_thread = ids_in_thread(&fake, issue);
    assert_eq!(in_thread.len(), 16, "{in_thread:?}");
    for id in ids.iter().chain(&spooled) {
        assert_eq!(in_thread.get(id), Some(&1), "record {id}: exactly once");
    }
}
