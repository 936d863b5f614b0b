//! `watch` end to end: it prints records posted after it started (not the ones before), on both
//! backends, stops on SIGTERM with exit 0, and says once when the forge goes away and once
//! when it is back.

use crate::{common, fake_forge};
use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::cli::{Bin, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use serde_json::Value;

/// A bound against a hung test, never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(20);

/// The lines of one of the child's streams, as they come.
fn lines(stream: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a line containing `needle`, returning every line read up to it.
fn until(rx: &Receiver<String>, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(PATIENCE) {
            Ok(line) => {
                let hit = line.contains(needle);
                seen.push(line);
                if hit {
                    return seen;
                }
            }
            Err(e) => panic!("no line with {needle:?} ({e}); saw {seen:?}"),
        }
    }
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    child.wait().unwrap()
}

fn post(bin: &Bin, prefix: &str, phase: &str) {
    let out = bin.run(&words(&format!(
        "{prefix} checkpoint --agent w --session s1 --phase {phase}"
    )));
    assert!(out.status.success(), "{out:?}");
}

/// Starts `watch` with `bin`, posts one record before and one after it is ready, and checks
/// that only the second is printed and that SIGTERM ends it with 0. Returns stdout's lines.
/// `prefix` goes before every verb (`--store DIR`).
fn watch_one(bin: &Bin, prefix: &str, extra: &str) -> Vec<String> {
    post(bin, prefix, "before_start");
    let mut child = bin
        .command(&words(&format!("{prefix} watch --interval 100ms {extra}")))
        .spawn()
        .unwrap();
    let out = lines(child.stdout.take().unwrap());
    let err = lines(child.stderr.take().unwrap());
    // With --json the "watching" event is on stdout, with the records; else a note on stderr.
    let mut printed = if extra.contains("--json") {
        until(&out, "watching")
    } else {
        until(&err, "watching");
        Vec::new()
    };
    post(bin, prefix, "after_start");
    printed.extend(until(&out, "after_start"));
    let status = terminate(&mut child);
    assert_eq!(
        status.code(),
        Some(0),
        "SIGTERM is a clean stop: {status:?}"
    );
    assert!(
        printed.iter().all(|l| !l.contains("before_start")),
        "{printed:?}"
    );
    printed
}

#[test]
fn local_watch_prints_a_record_posted_after_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("--store {}", dir.path().join("st").display());
    let printed = watch_one(&Bin::new(dir.path()), &prefix, "");
    let last = printed.last().unwrap();
    let fields: Vec<&str> = last.split("  ").collect();
    assert_eq!(
        fields[1..],
        ["w", "s1", "checkpoint", "after_start"],
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn forge_watch_prints_ndjson_and_stops_on_sigterm() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let printed = watch_one(&bin, "", "--json");
    let events: Vec<Value> = printed
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["event"], "watching", "{events:?}");
    assert_eq!(events[0]["existing"], 1);
    let last = events.last().unwrap();
    assert_eq!(last["event"], "record");
    assert_eq!(
        (&last["agent"], &last["phase"], &last["comment"]["author"]),
        (&"w".into(), &"after_start".into(), &"ca-bot".into())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forge_outage_is_said_once_when_it_starts_and_once_when_it_ends() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let mut child = bin
        .command(&words("watch --interval 20ms"))
        .spawn()
        .unwrap();
    let _out = lines(child.stdout.take().unwrap());
    let err = lines(child.stderr.take().unwrap());
    until(&err, "watching");
    fake.state().down = true;
    let mut said = until(&err, "still watching");
    // Let several polls fail before the forge comes back.
    let failed = || async {
        let requests = fake.requests().await;
        requests.len()
    };
    let before = failed().await;
    while failed().await < before + 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    fake.state().down = false;
    said.extend(until(&err, "answers again"));
    let status = terminate(&mut child);
    assert_eq!(status.code(), Some(0));
    said.extend(err.try_iter());
    let outage = said.iter().filter(|l| l.contains("still watching")).count();
    let back = said.iter().filter(|l| l.contains("answers again")).count();
    assert_eq!((outage, back), (1, 1), "{said:#?}");
    assert!(
        said.iter().any(|l| l.contains("503")),
        "the outage line says why: {said:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watch_started_during_an_outage_waits_for_the_forge() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    fake.state().down = true;
    let mut child = bin
        .command(&words("watch --interval 20ms"))
        .spawn()
        .unwrap();
    let out = lines(child.stdout.take().unwrap());
    let err = lines(child.stderr.take().unwrap());
    let mut said = until(&err, "still watching");
    fake.state().down = false;
    said.extend(until(&err, "new records follow"));
    post(&bin, "", "after_recovery");
    until(&out, "after_recovery");
    assert_eq!(terminate(&mut child).code(), Some(0));
    let back = said.iter().filter(|l| l.contains("answers again")).count();
    assert_eq!(back, 1, "{said:#?}");
}
