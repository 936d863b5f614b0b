//! Outages of the fake, switched by [`State::mode`]: a forge that refuses connections, answers
//! 503 to everything, or accepts connections and never answers.
//!
//! The 503 outage is the fake's own (routes answer it, as for `down`). The other two need the
//! socket itself, which wiremock does not let go of, so they are played by a [`Front`]: a TCP
//! front on its own port that forwards to the fake while it is up, closes its listener while
//! refusing (connections are refused by the OS; the same port is bound again when the mode
//! changes back) and, while silent, accepts and reads but never answers. A mode change closes
//! the connections opened under the old one, as a restarted server does.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

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
}

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
        Mode::Up | Mode::Unavailable => {
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
