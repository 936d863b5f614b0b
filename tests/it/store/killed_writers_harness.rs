//! The crash test's harness: running the real binary, killing it inside a stage it logs under
//! `-v`, a slow loopback link, and reading the outbox the way a flusher would.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::parse;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};

/// The longest one child may run before the test gives up on it.
pub const CHILD_LIMIT: Duration = Duration::from_secs(15);

pub fn command(uri: &str, dir: &Path, line: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_forgestate"));
    cmd.args(line.split_whitespace())
        .current_dir(dir)
        .env_clear()
        .env("HOME", dir)
        .env("USER", "tester")
        .env("FORGESTATE_URL", uri)
        .env("FORGESTATE_OWNER", OWNER)
        .env("FORGESTATE_REPO", REPO)
        .env("FORGESTATE_TOKEN", BOT_TOKEN)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A loopback TCP proxy to `upstream` that holds what a client sends for `hold` before
/// passing it on, and drops it if the client dies meanwhile: a kill soon after a post starts
/// lands before the forge has seen it, a later one after the forge committed it.
pub async fn slow_link(upstream: SocketAddr, hold: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_server, mut to_server) = server.into_split();
                let inbound = async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    'chunks: loop {
                        let mut held = match from_client.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => buf[..n].to_vec(),
                        };
                        let until = tokio::time::Instant::now() + hold;
                        loop {
                            tokio::select! {
                                _ = tokio::time::sleep_until(until) => break,
                                more = from_client.read(&mut buf) => match more {
                                    Ok(0) | Err(_) => break 'chunks, // the client died
                                    Ok(n) => held.extend_from_slice(&buf[..n]),
                                },
                            }
                        }
                        if to_server.write_all(&held).await.is_err() {
                            break;
                        }
                    }
                    let _ = to_server.shutdown().await;
                };
                let outbound = async move {
                    let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
                    let _ = to_client.shutdown().await;
                };
                tokio::join!(inbound, outbound);
            });
        }
    });
    format!("http://{addr}")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn outbox_dir(dir: &Path) -> PathBuf {
    dir.join("state/forgestate/outbox")
}

/// Every file under the outbox, as (path, file name), dead letters included.
pub fn outbox_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![outbox_dir(dir)];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            out.push((p, name));
        }
    }
    out
}

/// Whether a file under the outbox root is a dead letter (each forge/owner/repo has its own
/// queue directory, with its `dead/` beside the entries).
pub fn is_dead(dir: &Path, path: &Path) -> bool {
    path.strip_prefix(outbox_dir(dir))
        .is_ok_and(|rel| rel.iter().any(|c| c == forgestate::durable::DEAD_DIR))
}

/// Whether a file under the outbox root is a posted record kept for offline answers
/// (`landed/` beside the entries), not one waiting.
pub fn landed(dir: &Path, path: &Path) -> bool {
    path.strip_prefix(outbox_dir(dir))
        .is_ok_and(|rel| rel.iter().any(|c| c == forgestate::durable::LANDED_DIR))
}

/// The complete entries waiting in the outbox (not temp files, the lock or dead letters).
pub fn outbox_entries(dir: &Path) -> Vec<PathBuf> {
    outbox_files(dir)
        .into_iter()
        .filter(|(p, name)| {
            name.ends_with(".rec") && !name.starts_with('.') && !is_dead(dir, p) && !landed(dir, p)
        })
        .map(|(p, _)| p)
        .collect()
}

/// Every file in the dead letters.
pub fn dead_letters(dir: &Path) -> Vec<PathBuf> {
    outbox_files(dir)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| is_dead(dir, p))
        .collect()
}

/// The record ids of the entries waiting now; every entry must be a complete record.
pub fn ids_in_outbox(dir: &Path) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for path in outbox_entries(dir) {
        let Ok(body) = std::fs::read_to_string(&path) else {
            continue; // flushed between the listing and the read
        };
        let record = parse(&body)
            .unwrap_or_else(|e| panic!("{} is not a complete record: {e}", path.display()));
        ids.insert(record.id.expect("spooled records carry an id"));
    }
    ids
}

/// Record id -> how many comments in the issue carry it.
pub fn ids_in_thread(fake: &FakeForge, issue: u64) -> BTreeMap<String, usize> {
    let mut ids = BTreeMap::new();
    for c in fake.comments_on(issue) {
        let record = parse(&c.body).expect("only records are posted");
        *ids.entry(record.id.expect("records carry an id"))
            .or_insert(0) += 1;
    }
    ids
}

pub fn setup(fake: &FakeForge, dir: &Path, config: &str) -> u64 {
    std::fs::write(dir.join("forgestate.toml"), config).unwrap();
    let label = fake.add_label("Type/Automation");
    fake.add_issue(TITLE, &[label], false)
}

/// The rest of a `stage:` log line: the stage it opens (`spooling`, `posting`, `flushing`) or
/// closes (`spooled`, `posted`, `flushed`), then details.
pub fn stage_line(line: &str) -> Option<&str> {
    Some(&line[line.find("stage: ")? + "stage: ".len()..])
}

/// The stage a `stage:` log line opens or closes.
pub fn marker(line: &str) -> Option<&str> {
    marker_word(stage_line(line)?)
}

pub fn marker_word(rest: &str) -> Option<&str> {
    rest.split([' ', ',']).next()
}

/// How a child run aimed at a stage ended.
pub struct Run {
    /// Killed by SIGKILL (otherwise it exited by itself before the kill).
    pub killed: bool,
    /// The last stage marker it logged: where the kill landed.
    pub last: Option<String>,
    /// The whole last stage line (it names the entry being flushed).
    pub last_line: Option<String>,
    /// The exit code, when it exited.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd`, kills it `delay` after it logs the stage marker `target`, and tells where it was.
pub fn kill_in_stage(mut cmd: Command, target: &str, delay: Duration) -> Run {
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let limit = Instant::now() + CHILD_LIMIT;
    loop {
        match rx.recv_timeout(limit.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                let hit = marker(&line) == Some(target);
                lines.push(line);
                if hit {
                    std::thread::sleep(delay);
                    let _ = child.kill(); // SIGKILL; harmless when it already exited
                    break;
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!(
                    "a child ran longer than {CHILD_LIMIT:?}:\n{}",
                    lines.join("\n")
                );
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait().unwrap();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let mut stdout = String::new();
    out.read_to_string(&mut stdout).unwrap();
    let last_line = lines.iter().rev().find_map(|l| stage_line(l));
    Run {
        killed: status.signal() == Some(9),
        last: last_line.and_then(marker_word).map(str::to_string),
        last_line: last_line.map(str::to_string),
        code: status.code(),
        stdout,
        stderr: lines.join("\n"),
    }
}
