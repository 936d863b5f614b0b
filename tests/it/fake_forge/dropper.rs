//! A TCP proxy in front of the fake that can hang up on a request after the fake has carried it
//! out: the connection drops with the answer unsent, the case wiremock itself cannot produce.
//!
//! It speaks just enough HTTP/1.1 for this: one request at a time per connection (keep-alive
//! included), bodies sized by `Content-Length`, which is all reqwest sends and hyper answers here.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct Dropper {
    pub addr: SocketAddr,
    /// How many more matching requests to forward and then hang up on.
    pub drops: Arc<AtomicUsize>,
}

impl Dropper {
    /// Proxies to `upstream`; the next `drops` requests whose first line starts with `matching`
    /// (for example `"POST "` and ending in `/comments`) are forwarded, answered by the fake, and
    /// then the client's connection is closed without the answer.
    pub async fn start(upstream: SocketAddr, drops: usize, method: &'static str) -> Dropper {
        Dropper::start_matching(upstream, drops, method, "/comments").await
    }

    /// [`Dropper::start`] for requests whose path (without the query) ends in `suffix`, such as
    /// `"/issues"` for issue creation.
    pub async fn start_matching(
        upstream: SocketAddr,
        drops: usize,
        method: &'static str,
        suffix: &'static str,
    ) -> Dropper {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let left = Arc::new(AtomicUsize::new(drops));
        let counter = left.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let left = counter.clone();
                tokio::spawn(serve(client, upstream, left, method, suffix));
            }
        });
        Dropper { addr, drops: left }
    }

    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }
}

async fn serve(
    mut client: TcpStream,
    upstream: SocketAddr,
    left: Arc<AtomicUsize>,
    method: &'static str,
    suffix: &'static str,
) {
    let mut buf = Vec::new();
    while let Some(request) = read_message(&mut client, &mut buf).await {
        let drop_it = request.starts_with(method.as_bytes())
            && request_line(&request).ends_with(suffix)
            && left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
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
        if drop_it {
            // The fake has committed and answered; the client never hears of it.
            return;
        }
        if client.write_all(&answer).await.is_err() {
            return;
        }
    }
}

/// The request target of a request, without the query.
fn request_line(message: &[u8]) -> String {
    let line = message.split(|&b| b == b'\r').next().unwrap_or_default();
    let target = String::from_utf8_lossy(line)
        .split(' ')
        .nth(1)
        .unwrap_or_default()
        .to_string();
    target.split('?').next().unwrap_or_default().to_string()
}

/// Reads one HTTP/1.1 message (head plus `Content-Length` body) from `stream`, keeping any bytes
/// of the next message in `buf`.
pub async fn read_message(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            let total = end + 4 + len;
            if buf.len() >= total {
                let rest = buf.split_off(total);
                return Some(std::mem::replace(buf, rest));
            }
        }
        let mut chunk = [0u8; 16 * 1024];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}
