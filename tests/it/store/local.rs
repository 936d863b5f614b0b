//! The local JSONL store: concurrent writer processes, torn lines, monotonic ids, `since`.

use std::io::Write;
use std::process::Command;

use chrono::{Duration, Utc};
use forgestate::format::{Record, Renderer, parse};
use forgestate::store::{LocalThread, THREAD_FILE, Thread};
use serde_json::json;

const CHILD_ENV: &str = "FORGESTATE_TEST_APPEND_CHILD";

/// The writer process that [`two_processes_appending_500_each_leave_1000_intact_records`]
/// spawns: the same test, run again with [`CHILD_ENV`] set to `DIR|AUTHOR|COUNT`. Appends
/// COUNT records as AUTHOR to the store in DIR.
fn append_as_child(spec: &str) {
    let mut parts = spec.splitn(3, '|');
    let (Some(dir), Some(who), Some(count)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("{CHILD_ENV}={spec:?} is not DIR|AUTHOR|COUNT");
    };
    let count: usize = count.parse().unwrap();
    let store = LocalThread::new(dir, who);
    let renderer = Renderer::embedded().unwrap();
    for i in 0..count {
        let record = Record::checkpoint(
            who,
            "race",
            &format!("step_{i}"),
            json!({"i": i, "who": who}),
        )
        .unwrap();
        store
            .append_blocking(&renderer.render(&record).unwrap())
            .unwrap();
    }
}

#[test]
fn two_processes_appending_500_each_leave_1000_intact_records() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        return append_as_child(&spec);
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    // This test's name inside this crate, which the writers run as their entry.
    let this = format!(
        "{}::two_processes_appending_500_each_leave_1000_intact_records",
        module_path!().split_once("::").map_or("", |(_, m)| m)
    );
    let children: Vec<_> = ["writer-a", "writer-b"]
        .into_iter()
        .map(|who| {
            Command::new(&exe)
                .args(["--exact", &this, "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, format!("{}|{who}|500", dir.path().display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }

    let listing = LocalThread::new(dir.path(), "reader")
        .list_blocking(None)
        .unwrap();
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    assert_eq!(listing.comments.len(), 1000);
    let ids: Vec<u64> = listing.comments.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        (1..=1000).collect::<Vec<_>>(),
        "ids are gapless and strictly increasing"
    );
    for who in ["writer-a", "writer-b"] {
        let steps: Vec<u64> = listing
            .comments
            .iter()
            .filter(|c| c.author == who)
            .map(|c| parse(&c.body).unwrap().data()["i"].as_u64().unwrap())
            .collect();
        assert_eq!(
            steps,
            (0..500).collect::<Vec<_>>(),
            "{who}'s records are intact and in order"
        );
    }
    let created: Vec<_> = listing.comments.iter().map(|c| c.created_at).collect();
    assert!(
        created.windows(2).all(|w| w[0] <= w[1]),
        "created_at never goes backwards"
    );
}

#[test]
fn torn_last_line_is_reported_skipped_and_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path(), "me");
    store.append_blocking("first").unwrap();
    store.append_blocking("second").unwrap();
    let path = dir.path().join(THREAD_FILE);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"id":3,"author":"me","created_at":"2026-11-29T0"#)
        .unwrap();
    drop(f);

    let listing = store.list_blocking(None).unwrap();
    assert_eq!(
        listing
            .comments
            .iter()
            .map(|c| c.body.as_str())
            .collect::<Vec<_>>(),
        ["first", "second"]
    );
    assert_eq!(listing.warnings.len(), 1);
    assert!(
        listing.warnings[0].contains("torn last line"),
        "{}",
        listing.warnings[0]
    );

    let third = store.append_blocking("third").unwrap();
    assert_eq!(third.id, 3, "ids continue after the last valid line");
    let listing = store.list_blocking(None).unwrap();
    assert_eq!(
        listing.comments.iter().map(|c| c.id).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        listing.comments[2].body, "third",
        "the torn bytes did not swallow the new record"
    );
    assert_eq!(listing.warnings.len(), 1);
    assert!(
        listing.warnings[0].contains("corrupt line 3"),
        "{}",
        listing.warnings[0]
    );
}

#[test]
fn a_complete_last_line_without_newline_still_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path(), "me");
    store.append_blocking("one").unwrap();
    let path = dir.path().join(THREAD_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.trim_end()).unwrap();
    assert_eq!(store.list_blocking(None).unwrap().comments.len(), 1);
    assert_eq!(store.append_blocking("two").unwrap().id, 2);
    let listing = store.list_blocking(None).unwrap();
    assert_eq!(listing.comments.len(), 2);
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
}

#[test]
fn missing_store_lists_empty_and_bodies_are_opaque() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path().join("not-yet"), "me");
    assert!(store.list_blocking(None).unwrap().comments.is_empty());
    let odd = "line\nwith \"quotes\" and \u{0}nul and emoji 🦀";
    store.append_blocking(odd).unwrap();
    assert_eq!(store.list_blocking(None).unwrap().comments[0].body, odd);
}

#[tokio::test]
async fn since_is_inclusive_on_updated_at_in_whole_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalThread::new(dir.path(), "me");
    let c = store.append("x").await.unwrap();
    let same_second = c.updated_at.with_timezone(&Utc) + Duration::milliseconds(999)
        - Duration::nanoseconds(i64::from(c.updated_at.timestamp_subsec_nanos()));
    assert_eq!(
        store.list(Some(same_second)).await.unwrap().comments.len(),
        1
    );
    let next_second = c.updated_at + Duration::seconds(1);
    let after = chrono::DateTime::from_timestamp(next_second.timestamp(), 0).unwrap();
    assert_eq!(store.list(Some(after)).await.unwrap().comments.len(), 0);
    assert_eq!(store.whoami().await.unwrap(), "me");
}

/// One line of `thread.jsonl` as a person or a merge tool might have written it.
fn hand_line(id: u64, body: &str) -> String {
    format!(
        "{}\n",
        json!({"id": id, "author": "me", "created_at": "2026-11-29T08:00:00Z",
               "updated_at": "2026-11-29T08:00:00Z", "body": body})
    )
}

#[test]
fn an_append_after_a_merged_file_gets_an_id_above_every_existing_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(THREAD_FILE);
    // Two branches merged: ids out of order and repeated; the largest is not the last line.
    let text = [(1, "a"), (9, "b"), (2, "c"), (9, "d"), (4, "e")]
        .map(|(id, body)| hand_line(id, body))
        .concat();
    std::fs::write(&path, text).unwrap();
    let store = LocalThread::new(dir.path(), "me");
    let new = store.append_blocking("new").unwrap();
    assert_eq!(
        new.id, 11,
        "above the largest id, and above the 10 the repeated 9 is read as; not the last line's"
    );
    assert!(
        new.created_at
            >= "2026-11-29T08:00:00Z"
                .parse::<chrono::DateTime<Utc>>()
                .unwrap(),
        "created_at keeps up with the line holding the largest id"
    );
    let listing = store.list_blocking(None).unwrap();
    let newest = listing.comments.iter().max_by_key(|c| c.id).unwrap();
    assert_eq!(
        newest.body, "new",
        "the new record sorts after every old one"
    );
    // The same with a hand-written line whose keys are in another order and spaced out.
    std::fs::write(
        &path,
        "{ \"body\": \"x\", \"author\": \"me\", \"id\": 70, \"created_at\": \
         \"2026-11-29T08:00:00Z\", \"updated_at\": \"2026-11-29T08:00:00Z\" }\n"
            .to_string()
            + &hand_line(3, "y"),
    )
    .unwrap();
    assert_eq!(store.append_blocking("z").unwrap().id, 71);
}

#[test]
fn a_repeated_id_loses_no_record_and_warm_and_cold_reads_and_appends_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(THREAD_FILE);
    // Two stores merged by `cat`, each with ids 1 and 2, the second sharing the first record.
    let text = [(1, "a"), (2, "a2"), (1, "a"), (2, "b2"), (3, "b3")]
        .map(|(id, body)| hand_line(id, body))
        .concat();
    std::fs::write(&path, text).unwrap();
    let store = LocalThread::new(dir.path(), "me");
    let read = |listing: &forgestate::store::Listing| {
        let mut pairs: Vec<(u64, String)> = listing
            .comments
            .iter()
            .map(|c| (c.id, c.body.clone()))
            .collect();
        pairs.sort();
        pairs
    };
    let cold = store.list_blocking(None).unwrap();
    let want = |extra: &[(u64, &str)]| {
        let mut want: Vec<(u64, String)> = [(1, "a"), (2, "a2"), (3, "b2"), (4, "b3")]
            .iter()
            .chain(extra)
            .map(|&(id, b)| (id, b.to_string()))
            .collect();
        want.sort();
        want
    };
    assert_eq!(
        read(&cold),
        want(&[]),
        "the copy read once, the conflicts renumbered"
    );
    let warnings = cold.warnings.join("\n");
    assert!(
        warnings.contains("line 4 repeats id 2 of line 2, read as id 3")
            && warnings.contains("2 lines repeat")
            && warnings.contains("line 3 is a copy of line 1"),
        "{warnings}"
    );
    // A warm read continues from a cursor; an append takes an id above the renumbered ones.
    let first = store.delta_blocking(None).unwrap();
    assert_eq!(read(&first.listing), want(&[]));
    let new = store.append_blocking("new").unwrap();
    assert_eq!(new.id, 5, "never the id a repeated line is read under");
    let warm = store.delta_blocking(first.cursor.as_ref()).unwrap();
    assert!(!warm.full, "an append after the cursor is read alone");
    assert_eq!(read(&warm.listing), vec![(5, "new".to_string())]);
    // A hand-appended line reusing an id is a record of its own too, warm or cold.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, hand_line(1, "late").as_bytes()).unwrap();
    let warm = store.delta_blocking(warm.cursor.as_ref()).unwrap();
    let cold = store.list_blocking(None).unwrap();
    assert!(
        warm.full,
        "an id not above the cursor's makes the whole file read again"
    );
    let all = want(&[(5, "new"), (6, "late")]);
    assert_eq!((read(&warm.listing), read(&cold)), (all.clone(), all));
    assert_eq!(store.append_blocking("after").unwrap().id, 7);
    // A delete writes the ids lines are read under into the file: nothing shifts.
    let deleted = store.delete_blocking(&[2]).unwrap();
    assert_eq!(deleted.deleted, vec![2]);
    let after = store.list_blocking(None).unwrap();
    let mut all = want(&[(5, "new"), (6, "late"), (7, "after")]);
    all.retain(|(id, _)| *id != 2);
    assert_eq!(read(&after), all);
    assert!(after.warnings.is_empty(), "{:?}", after.warnings);
}

#[test]
fn an_id_at_the_limit_refuses_the_append_and_names_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(THREAD_FILE);
    let before = hand_line(u64::MAX, "edited") + &hand_line(5, "later");
    std::fs::write(&path, &before).unwrap();
    let store = LocalThread::new(dir.path(), "me");
    let err = store.append_blocking("new").unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains(&u64::MAX.to_string()) && err.contains("renumber"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "nothing was written"
    );
}

#[test]
fn many_corrupt_or_disordered_lines_make_one_warning_each_with_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = hand_line(1, "ok");
    for _ in 0..50 {
        text.push_str("garbage\n");
    }
    for id in [7, 3, 2, 8] {
        text.push_str(&hand_line(id, "ok"));
    }
    std::fs::write(dir.path().join(THREAD_FILE), text).unwrap();
    let listing = LocalThread::new(dir.path(), "me")
        .list_blocking(None)
        .unwrap();
    assert_eq!(listing.comments.len(), 5);
    assert_eq!(listing.warnings.len(), 2, "{:#?}", listing.warnings);
    let corrupt = &listing.warnings[0];
    assert!(
        corrupt.contains("50 corrupt lines") && corrupt.contains("line 2 "),
        "count and first bad line: {corrupt}"
    );
    let order = &listing.warnings[1];
    assert!(
        order.contains("2 lines") && order.contains("line 53 has id 3 after id 7"),
        "count and first disordered line: {order}"
    );
}

/// Runs `f` on another thread and fails the test if it takes more than a few seconds (a store
/// that blocks on a FIFO never returns).
fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(5))
        .expect("the store call returned within 5 s")
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_in_place_of_the_thread_file_is_refused_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(THREAD_FILE);
    let made = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(made.success());
    for op in ["list", "append", "init"] {
        let store = LocalThread::new(dir.path(), "me");
        let err = promptly(move || match op {
            "list" => store.list_blocking(None).map(drop),
            "append" => store.append_blocking("x").map(drop),
            _ => store.init_blocking().map(drop),
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("FIFO") && err.contains("not a regular file"),
            "{op}: {err}"
        );
    }
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/dev/null", &path).unwrap();
    let store = LocalThread::new(dir.path(), "me");
    let err = store.list_blocking(None).unwrap_err().to_string();
    assert!(err.contains("a device"), "{err}");
}
