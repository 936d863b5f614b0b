//! Measuring one child process of the scenario benchmark: the environment it runs in, its
//! wall time, requests (from the fake's log) and peak RSS, and the median of several runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};

/// One measured child process.
pub struct Run {
    pub requests: usize,
    pub wall: Duration,
    pub rss_kib: i64,
    pub ok: bool,
}

/// Runs `bin` (or curl) with `args` in `dir`, measuring it as [`Run`] says.
pub async fn measure(fake: &FakeForge, program: &Path, args: &[&str], dir: &Path) -> Run {
    measure_with(fake, program, args, dir, &[]).await
}

/// [`measure`], with these variables added to the child's environment.
pub async fn measure_with(
    fake: &FakeForge,
    program: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, &str)],
) -> Run {
    let before = fake.requests().await.len();
    let started = Instant::now();
    let child = command(fake, program, dir)
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let (ok, rss_kib) = match child {
        Ok(child) => tokio::task::spawn_blocking(move || reap(child.id()))
            .await
            .unwrap_or((false, 0)),
        Err(_) => (false, 0),
    };
    let wall = started.elapsed();
    let requests = fake.requests().await.len() - before;
    Run {
        requests,
        wall,
        rss_kib,
        ok,
    }
}

/// A configuration file with rotation off: the benchmark measures reads of a thread of N
/// comments, which automatic rotation (default past 2,000) would otherwise cut short.
pub fn bench_config(dir: &Path) -> PathBuf {
    let path = dir.join("bench.toml");
    if !path.exists() {
        let _ = std::fs::write(&path, "[forge]\nrotate_after = 0\n");
    }
    path
}

/// Waits for `pid`: whether it exited 0, and its peak resident set in KiB. The peak is the
/// child's own `VmHWM` from `/proc/PID/status`, sampled every millisecond until it exits:
/// `wait4(2)`'s `ru_maxrss` would carry this (large) process's own peak across fork and exec.
fn reap(pid: u32) -> (bool, i64) {
    let status_file = format!("/proc/{pid}/status");
    let mut peak = 0;
    let mut status = 0;
    loop {
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        }) {
            peak = peak.max(kib);
        }
        // SAFETY: waitpid on our own child's pid, with a valid status pointer.
        let got = unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
        if got == pid as i32 {
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            return (ok, peak);
        }
        if got < 0 {
            return (false, peak);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

pub async fn curl(fake: &FakeForge, url: &str, dir: &Path) -> Run {
    let auth = format!("Authorization: token {BOT_TOKEN}");
    let args = ["-sf", "-o", "/dev/null", "-H", &auth, url];
    measure(fake, Path::new("curl"), &args, dir).await
}

/// The median of `runs` by wall time (its requests and RSS are that run's).
pub fn median(mut runs: Vec<Run>) -> Run {
    runs.sort_by_key(|r| r.wall);
    let ok = runs.iter().all(|r| r.ok);
    let mid = runs.len() / 2;
    let mut m = runs.swap_remove(mid);
    m.ok = ok;
    m
}

/// The environment [`measure`] gives a child, as a command.
pub fn command(fake: &FakeForge, program: &Path, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env_clear()
        .env("HOME", dir)
        .env("USER", "bench")
        .env("FORGESTATE_URL", fake.uri())
        .env("FORGESTATE_OWNER", OWNER)
        .env("FORGESTATE_REPO", REPO)
        .env("FORGESTATE_TOKEN", BOT_TOKEN)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("FORGESTATE_CONFIG", bench_config(dir));
    c
}
