//! A fault-injecting TCP proxy in front of the fake, for soak runs: while a [`Mode`] is set, each
//! request meets its fault with the mode's probability. 503 bursts (answered by the proxy, the
//! fake never sees them), dropped requests (the connection closes before the fake sees it),
//! commit-then-drop (the fake commits and answers, the proxy hangs up: see `dropper.rs`) and slow
//! answers (held back for a while, some past the client's timeout).
//!
//! It speaks HTTP/1.1 as `dropper.rs` does (and reuses its message reader).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::fake_forge::dropper::read_message;

/// What the proxy does to requests now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every request goes through.
    Calm = 0,
    /// Every request is answered 503 by the proxy (a burst).
    Burst503 = 1,
    /// Some requests are dropped unseen: the connection closes.
    Drop = 2,
    /// Some requests are carried out by the fake, then the connection closes unanswered.
    CommitThenDrop = 3,
    /// Some answers come late: `slow` plus up to as much again.
    Slow = 4,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Calm,
        Mode::Burst503,
        Mode::Drop,
        Mode::CommitThenDrop,
        Mode::Slow,
    ];

    fn of(n: u8) -> Mode {
        Mode::ALL.get(usize::from(n)).copied().unwrap_or(Mode::Calm)
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Calm => "calm",
            Mode::Burst503 => "503 burst",
            Mode::Drop => "dropped",
            Mode::CommitThenDrop => "commit-then-drop",
            Mode::Slow => "slow",
        }
    }
}

/// The running proxy.
pub struct FaultProxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    mode: AtomicU8,
    /// The chance, in percent, that a request meets the fault of a mode other than the burst.
    percent: u64,
    slow: Duration,
    rng: AtomicU64,
    /// Faults applied, by [`Mode`] index (the calm slot counts requests passed through).
    applied: [AtomicU64; 5],
}

impl Shared {
    /// A pseudo-random number in `0..100`.
    fn roll(&self) -> u64 {
        let mut x = self.rng.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
        x ^= x >> 30;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 27;
        x % 100
    }

    /// The fault this request meets (`Calm`: none).
    fn pick(&self) -> Mode {
        let mode = Mode::of(self.mode.load(Ordering::Relaxed));
        let hit = match mode {
            Mode::Calm => false,
            Mode::Burst503 => true,
            _ => self.roll() < self.percent,
        };
        let fault = if hit { mode } else { Mode::Calm };
        self.applied[fault as usize].fetch_add(1, Ordering::Relaxed);
        fault
    }
}

impl FaultProxy {
    /// Proxies to `upstream`. Outside a burst, a request meets the mode's fault with chance
    /// `percent`; slow answers wait `slow` plus up to as much again.
    pub async fn start(upstream: SocketAddr, percent: u64, slow: Duration) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let shared = Arc::new(Shared {
            mode: AtomicU8::new(Mode::Calm as u8),
            percent,
            slow,
            rng: AtomicU64::new(0x2545_f491_4f6c_dd1d),
            applied: Default::default(),
        });
        let serving = shared.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, upstream, serving.clone()));
            }
        });
        FaultProxy { addr, shared }
    }

    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set(&self, mode: Mode) {
        self.shared.mode.store(mode as u8, Ordering::Relaxed);
    }

    /// How many requests met each mode's fault (the calm count: passed through untouched).
    pub fn applied(&self) -> Vec<(Mode, u64)> {
        Mode::ALL
            .iter()
            .map(|&m| (m, self.shared.applied[m as usize].load(Ordering::Relaxed)))
            .collect()
    }
}

async fn serve(mut client: TcpStream, upstream: SocketAddr, shared: Arc<Shared>) {
    let mut buf = Vec::new();
    while let Some(request) = read_message(&mut client, &mut buf).await {
        let fault = shared.pick();
        match fault {
            Mode::Burst503 => {
                let body = br#"{"message":"service unavailable (soak burst)","url":""}"#;
                let head = format!(
                    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\n\r\n",
                    body.len()
                );
                let answer = [head.as_bytes(), body].concat();
                if client.write_all(&answer).await.is_err() {
                    return;
                }
                continue;
            }
            Mode::Drop => return,
            _ => {}
        }
        let Ok(mut up) = TcpStream::connect(upstream).await else {
            return;
        };
        if up.write_all(&request).await.is_err() {
            return;
        }
        let mut up_buf = Vec::new();
        let Some(answer) = read_message(&mut up, &mut up_buf).await else {
            return;
        };
        match fault {
            Mode::CommitThenDrop => return,
            Mode::Slow => {
                let extra = shared.slow.mul_f64(shared.roll() as f64 / 100.0);
                tokio::time::sleep(shared.slow + extra).await;
            }
            _ => {}
        }
        if client.write_all(&answer).await.is_err() {
            return;
        }
    }
}
