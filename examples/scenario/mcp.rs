//! The long-lived server's figure: one `forgestate mcp` child driven over stdio with bare
//! JSON-RPC lines, `resume` called again and again, each call timed from request to answer.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_forge::FakeForge;
use crate::run::command;

/// A running `forgestate mcp`.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    /// Starts `command` (already given its environment) and initializes the session.
    pub fn start(mut command: Command) -> Option<Server> {
        let mut child = command
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        let mut server = Server {
            child,
            stdin,
            stdout,
            next: 1,
        };
        server.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "scenario", "version": "1"}}),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Some(server)
    }

    fn send(&mut self, message: &Value) -> Option<()> {
        writeln!(self.stdin, "{message}").ok()?;
        self.stdin.flush().ok()
    }

    /// Calls `method` and waits for its answer.
    fn call(&mut self, method: &str, params: Value) -> Option<Value> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let message: Value = serde_json::from_str(&line).ok()?;
            if message["id"] == id {
                return Some(message);
            }
        }
    }

    /// One `tools/call` of `tool`: how long it took, and whether it answered without error.
    pub fn tool(&mut self, tool: &str, arguments: Value) -> (Duration, bool) {
        let started = Instant::now();
        let answer = self.call("tools/call", json!({"name": tool, "arguments": arguments}));
        let ok = answer.is_some_and(|a| a["result"]["isError"] == false);
        (started.elapsed(), ok)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// 20 `resume` calls to one `forgestate mcp` over the warm cache directory, each after 5 new
/// comments by another machine: the median call, and whether every call answered.
pub async fn resumes(
    fake: &FakeForge,
    bin: &Path,
    issue: u64,
    dir: &Path,
    round0: usize,
) -> Option<(f64, bool)> {
    let cmd = command(fake, bin, dir);
    let calls = tokio::task::spawn_blocking(move || Server::start(cmd))
        .await
        .ok()??;
    let mut server = calls;
    let args = json!({"agent": "implementation-worker", "session": "sess-0000"});
    let _ = server.tool("resume", args.clone()); // the first call opens the connection
    let mut times = Vec::new();
    let mut ok = true;
    for round in 0..20 {
        crate::thread::new_posts(fake, issue, round0 + round);
        let a = args.clone();
        let (took, fine, back) = tokio::task::spawn_blocking(move || {
            let (took, fine) = server.tool("resume", a);
            (took, fine, server)
        })
        .await
        .ok()?;
        server = back;
        ok &= fine;
        times.push(took.as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Some((times[times.len() / 2], ok))
}
