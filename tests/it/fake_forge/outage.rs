//! Outages and slow forges of the fake, switched by [`State::mode`]: a forge that refuses
//! connections, answers 503 to everything, accepts connections and never answers, starts
//! answering comment lists late, sends its headers at once and then dribbles the body, or sits
//! behind a round-robin balancer with one dead backend (every other request 503 or dropped).
//!
//! The 503 outage and the late list are the fake's own (routes answer them). The others need
//! the socket itself, which wiremock does not let go of, so they are played by a [`Front`]: a
//! TCP front on its own port that forwards to the fake while it is up, closes its listener
//! while refusing (connections are refused by the OS; the same port is bound again when the
//! mode changes back), while silent accepts and reads but never answers, and while dribbling
//! or alternating forwards one request at a time (`dropper::read_message`). A mode change
//! closes the connections opened under the old one, as a restarted server does.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::dropper::read_message;
use super::{FakeForge, State};

/// How the fake answers (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Normally.
    #[default]
    Up,
    /// Connections are refused (through a [`Front`]).
    Refusing,
    /// Every request is answered 503 and nothing changes.
    Unavailable,
    /// Connections are accepted and requests read, but nothing is ever answered (through a
    /// [`Front`]).
    Silent,
    /// Comment lists (`GET …/comments`) start answering this much later: a long thread on a
    /// busy forge.
    SlowList(Duration),
    /// Every answer's status line and headers come at once, then its body [`DRIBBLE_BYTES`]
    /// at a time every [`DRIBBLE_TICK`] (through a [`Front`]): a forge or proxy that answers
    /// slowly.
    Dribble,
    /// A round-robin balancer with one dead backend: every other request (the second, the
    /// fourth, ...) is answered 503 without reaching the fake, or with `drop` its connection is
    /// closed unanswered (through a [`Front`]).
    Alternating { drop: bool },
}

/// How much of a body a dribbling forge sends at a time.
pub const DRIBBLE_BYTES: usize = 8;
/// How often a dribbling forge sends them: 80 bytes a second, so a comment list or a posted
/// comment's answer of a few kilobytes takes tens of seconds.
pub const DRIBBLE_TICK: Duration = Duration::from_millis(100);

/// Every outage mode, with a name for messages.
pub const OUTAGES: [(Mode, &str); 3] = [
    (Mode::Refusing, "refusing connections"),
    (Mode::Unavailable, "503 on every request"),
    (Mode::Silent, "accepting and never answering"),
];

/// How often the front looks at the mode.
const TICK: Duration = Duration::from_millis(20);

/// The fake's outage front: clients use [`Front::uri`] instead of the fake's.
pub struct Front {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Front {
    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Switches the fake's mode, and returns once the front has seen it (connections opened
    /// under the old mode are closed, the listener dropped or bound again).
    pub fn set(&self, mode: Mode) {
        lock(&self.state).mode = mode;
        std::thread::sleep(TICK * 4);
    }
}

impl FakeForge {
    /// Starts a [`Front`] before the fake.
    pub async fn front(&self) -> Front {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state = self.state.clone();
        let upstream = self.addr();
        tokio::spawn(listen(listener, addr, upstream, state.clone()));
        Front { addr, state }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

fn mode(state: &Mutex<State>) -> Mode {
    lock(state).mode
}

async fn listen(
    mut listener: TcpListener,
    addr: SocketAddr,
    upstream: SocketAddr,
    state: Arc<Mutex<State>>,
) {
    loop {
        if mode(&state) == Mode::Refusing {
            drop(listener);
            while mode(&state) == Mode::Refusing {
                tokio::time::sleep(TICK).await;
            }
            listener = loop {
                match TcpListener::bind(addr).await {
                    Ok(l) => break l,
                    Err(_) => tokio::time::sleep(TICK).await,
                }
            };
        }
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                tokio::spawn(serve(client, upstream, state.clone()));
            }
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

/// One connection, under the mode it was accepted in, closed when the mode changes.
async fn serve(mut client: TcpStream, upstream: SocketAddr, state: Arc<Mutex<State>>) {
    let opened = mode(&state);
    let changed = async {
        while mode(&state) == opened {
            tokio::time::sleep(TICK).await;
        }
    };
    match opened {
        Mode::Silent => {
            let swallow = async {
                let mut buf = [0u8; 4096];
                while matches!(client.read(&mut buf).await, Ok(n) if n > 0) {}
                // The client hung up: hold on anyway, as a stuck server does.
                std::future::pending::<()>().await;
            };
            tokio::select! {
                () = swallow => {}
                () = changed => {}
            }
        }
        Mode::Refusing => {}
        Mode::Dribble | Mode::Alternating { .. } => {
            tokio::select! {
                () = one_at_a_time(client, upstream, state.clone(), opened) => {}
                () = changed => {}
            }
        }
        Mode::Up | Mode::Unavailable | Mode::SlowList(_) => {
            let Ok(mut server) = TcpStream::connect(upstream).await else {
                return;
            };
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                () = changed => {}
            }
        }
    }
}

/// The 503 of the dead backend.
const UNAVAILABLE: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 11\r\n\r\nno backend\n";

/// Serves a connection one request at a time under `mode` (dribbling or alternating).
async fn one_at_a_time(
    mut client: TcpStream,
    upstream: SocketAddr,
    state: Arc<Mutex<State>>,
    mode: Mode,
) {
    let mut buf = Vec::new();
    while let Some(request) = read_message(&mut client, &mut buf).await {
        if let Mode::Alternating { drop } = mode {
            let n = {
                let mut s = lock(&state);
                s.alternated += 1;
                s.alternated
            };
            if n % 2 == 0 {
                if drop || client.write_all(UNAVAILABLE).await.is_err() {
                    return;
                }
                continue;
            }
        }
        let Ok(mut server) = TcpStream::connect(upstream).await else {
            return;
        };
        if server.write_all(&request).await.is_err() {
            return;
        }
        let Some(answer) = read_message(&mut server, &mut Vec::new()).await else {
            return;
        };
        let sent = match mode {
            Mode::Dribble => dribble(&mut client, &answer).await,
            _ => client.write_all(&answer).await,
        };
        if sent.is_err() {
            return;
        }
    }
}

/// Writes `answer`'s head at once, then its body a few bytes at a time.
async fn dribble(client: &mut TcpStream, answer: &[u8]) -> std::io::Result<()> {
    let head = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |end| end + 4);
    client.write_all(&answer[..head]).await?;
    client.flush().await?;
    for piece in answer[head..].chunks(DRIBBLE_BYTES) {
        tokio::time::sleep(DRIBBLE_TICK).await;
        client.write_all(piece).await?;
        client.flush().await?;
    }
    Ok(())
}
