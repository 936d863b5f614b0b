//! A record's agent, session or phase (a comment an issue writer edited, a seed agent's phase)
//! may hold terminal escapes: `watch`'s lines and messages on stderr (`rotate`'s warning "not
//! carried (... of agent x^[]0;...", `fork`'s error naming a session's agents) printed them
//! raw, where `status`, `list` and `history` make them spaces. Now they do too.

use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use crate::common::cli::{Bin, stderr, store_args};
use crate::common::seed_line;

/// A bound against a hung test, never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(20);

const EVIL: &str = "x\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202e}y";

fn body(agent: &str, session: &str, phase: &str, id: &str) -> String {
    format!(
        "[CHECKPOINT] {agent}\nVersion: 2.0\nPhase: {phase}\nSession: {session}\n\
         Time: 2026-12-01T19:00:00.000000Z\nId: {id}\n\nState Data:\n```json\n{{}}\n```\n"
    )
}

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

fn until(rx: &Receiver<String>, needle: &str) -> String {
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(PATIENCE) {
            Ok(line) if line.contains(needle) => return line,
            Ok(line) => seen.push(line),
            Err(e) => panic!("no line with {needle:?} ({e}); saw {seen:?}"),
        }
    }
}

fn clean(text: &str) -> bool {
    !text
        .chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || forgestate::format::is_invisible(c))
}

#[test]
fn watch_prints_a_records_names_without_their_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = d.join("st");
    std::fs::create_dir_all(&st).unwrap();
    let thread = st.join("thread.jsonl");
    let first = body("w", "s0", "p", "01a22be7-ab92-73b1-a40e-bab54f807bc1");
    std::fs::write(&thread, seed_line(1, &first) + "\n").unwrap();
    let mut child = Bin::new(d)
        .command(&store_args(d, &["watch", "--interval", "100ms"]))
        .spawn()
        .unwrap();
    let out = lines(child.stdout.take().unwrap());
    let err = lines(child.stderr.take().unwrap());
    until(&err, "watching");
    let evil = body(EVIL, EVIL, EVIL, "01a22be7-ab92-73b1-a40e-bab54f807bc2");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&thread)
        .unwrap();
    writeln!(file, "{}", seed_line(2, &evil)).unwrap();
    drop(file);
    let line = until(&out, "pwned");
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    child.wait().unwrap();
    assert!(clean(&line), "watch printed a control character: {line:?}");
    assert!(line.contains("x ]0;pwned  [2J 31m y"), "{line:?}");
}

/// Every line on stderr (warnings, `rotate`'s "not carried", errors) goes through one writer:
/// here `fork`'s error naming the session's agents, one of them a record's escapes.
#[test]
fn a_message_naming_a_record_prints_it_without_its_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = d.join("st");
    std::fs::create_dir_all(&st).unwrap();
    let plain = body("w", "s1", "p", "01a22be7-ab92-73b1-a40e-bab54f807bc1");
    let evil = body(EVIL, "s1", "p", "01a22be7-ab92-73b1-a40e-bab54f807bc2");
    let thread = seed_line(1, &plain) + "\n" + &seed_line(2, &evil) + "\n";
    std::fs::write(st.join("thread.jsonl"), thread).unwrap();
    let out = Bin::new(d).run(&store_args(
        d,
        &["fork", "--session", "s1", "--new-session", "s2"],
    ));
    let said = stderr(&out);
    assert!(
        said.contains("x ]0;pwned  [2J 31m y"),
        "the agent is named: {said:?}"
    );
    assert!(clean(&said), "stderr got a control character: {said:?}");
}
