//! A cold read's patience holds against a forge that answers and then does not finish: a body
//! cut off mid-way (`Content-Length` then close), one that trickles under the least rate, and
//! an endless body that flows fast. Each is played by a small hostile server; the read ends
//! with its patience (exit 75), says once that it waits and why, and its retry line does not
//! promise an outbox this machine does not have.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::timed;
use crate::common::cli::stderr;

/// What the hostile server does after each request's head.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    /// `Content-Length: 4000`, 2000 bytes, close.
    CutOff,
    /// A chunked body, one byte every 200 ms: 5 bytes a second.
    Trickle,
    /// A chunked body of spaces, 512 bytes every 100 ms, forever.
    Endless,
}

/// Serves every connection in `mode` until the test ends.
async fn hostile(mode: Hostile) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, mode));
        }
    });
    format!("http://{addr}")
}

async fn serve(mut stream: TcpStream, mode: Hostile) {
    // The request's head (a read sends no body).
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
            _ => return,
        }
    }
    let chunked = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                   Transfer-Encoding: chunked\r\n\r\n";
    match mode {
        Hostile::CutOff => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                        Content-Length: 4000\r\n\r\n[";
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(&[b' '; 1999]).await;
            let _ = stream.shutdown().await;
        }
        Hostile::Trickle => {
            let _ = stream.write_all(chunked.as_bytes()).await;
            let _ = stream.write_all(b"1\r\n[\r\n").await;
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                if stream.write_all(b"1\r\n \r\n").await.is_err() {
                    return;
                }
            }
        }
        Hostile::Endless => {
            let _ = stream.write_all(chunked.as_bytes()).await;
            let _ = stream.write_all(b"1\r\n[\r\n").await;
            let mut chunk = b"200\r\n".to_vec();
            chunk.extend_from_slice(&[b' '; 512]);
            chunk.extend_from_slice(b"\r\n");
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if stream.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A cold `resume` (no read cache, no outbox) with a 1 s wait budget and 4 s of patience: it
/// gives up with exit 75, far sooner than the 30 s retry budget or request timeout it used to
/// run to (the bound is a hang guard, not a speed check).
async fn cold_read_gives_up(mode: Hostile) -> String {
    let uri = hostile(mode).await;
    let cold = tempfile::tempdir().unwrap();
    let (out, took) = timed(
        &uri,
        cold.path(),
        &[],
        "resume --agent w --session s --wait 1s --patience 4s --json",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(75), "{mode:?}: {err}");
    assert!(
        took < Duration::from_secs(20),
        "{mode:?}: the patience (4 s), not the retry budget (30 s): {took:?}\n{err}"
    );
    assert!(
        !err.contains("outbox"),
        "{mode:?}: no outbox on this machine: {err}"
    );
    err
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_cut_off_ends_a_cold_read_with_its_patience() {
    let err = cold_read_gives_up(Hostile::CutOff).await;
    assert!(
        err.contains("then giving up, since this machine has no read cache"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trickled_body_ends_a_cold_read_with_its_patience() {
    cold_read_gives_up(Hostile::Trickle).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_body_ends_a_cold_read_with_its_patience_and_says_it_waits() {
    let err = cold_read_gives_up(Hostile::Endless).await;
    let waiting = err
        .lines()
        .filter(|l| l.contains("waiting for it up to"))
        .count();
    assert_eq!(waiting, 1, "says once that it waits, and why: {err}");
    assert!(err.contains("no read cache"), "{err}");
}
