//! Running the real `forgestate` binary from tests.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The commands that are the CLI's own rather than verbs of the table.
pub const CLI_OWN: [&str; 4] = ["mcp", "call", "completions", "man"];

/// Every command of the binary: the verb table's, then the CLI's own (tests of help,
/// completions and man pages walk it).
pub fn verbs() -> Vec<&'static str> {
    forgestate::verbs::table()
        .into_iter()
        .map(|s| s.name)
        .chain(CLI_OWN)
        .collect()
}

/// Splits a command line on spaces (for arguments that contain none).
pub fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// The one way the tests run the binary: a working directory, a clean environment with only
/// what the test adds, and optional stdin.
#[derive(Debug, Clone)]
pub struct Bin {
    cwd: PathBuf,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
}

impl Bin {
    /// In `cwd`, with `HOME=cwd` and `USER=tester` and nothing else.
    pub fn new(cwd: &Path) -> Bin {
        Bin::bare(cwd)
            .env("HOME", cwd.display().to_string())
            .env("USER", "tester")
    }

    /// In `cwd` with an empty environment: no `HOME`, no `USER` (cron or systemd).
    pub fn bare(cwd: &Path) -> Bin {
        Bin {
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            stdin: None,
        }
    }

    /// Sets one variable (replacing an earlier value).
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Bin {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// Sets each of `pairs`.
    pub fn envs(self, pairs: &[(&str, &str)]) -> Bin {
        pairs.iter().fold(self, |bin, (k, v)| bin.env(k, *v))
    }

    /// Unsets one variable.
    pub fn without(mut self, key: &str) -> Bin {
        self.env.retain(|(k, _)| k != key);
        self
    }

    /// The forge coordinates and token, as `FORGESTATE_*` variables.
    pub fn coords(self, url: &str, owner: &str, repo: &str, token: &str) -> Bin {
        self.env("FORGESTATE_URL", url)
            .env("FORGESTATE_OWNER", owner)
            .env("FORGESTATE_REPO", repo)
            .env("FORGESTATE_TOKEN", token)
    }

    /// The cache in `cwd/cache` and the state (outboxes) in `cwd/state`.
    pub fn dirs(self) -> Bin {
        let cache = self.cwd.join("cache").display().to_string();
        let state = self.cwd.join("state").display().to_string();
        self.env("XDG_CACHE_HOME", cache)
            .env("XDG_STATE_HOME", state)
    }

    /// [`Bin::coords`] plus [`Bin::dirs`]: a forge command as an agent runs it.
    pub fn forge(self, url: &str, owner: &str, repo: &str, token: &str) -> Bin {
        self.coords(url, owner, repo, token).dirs()
    }

    /// Feeds `input` on stdin (by default stdin is empty).
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Bin {
        self.stdin = Some(input.into());
        self
    }

    /// The command, ready to spawn, with stdout and stderr piped and stdin piped when
    /// [`Bin::stdin`] was given (null otherwise); the caller writes it.
    pub fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_forgestate"));
        cmd.args(args)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs to completion with `args`.
    pub fn run(&self, args: &[String]) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .spawn()
            .expect("spawn forgestate");
        let mut input = child.stdin.take().expect("stdin");
        if let Some(bytes) = &self.stdin {
            input.write_all(bytes).expect("write stdin");
        }
        drop(input);
        child.wait_with_output().expect("wait for forgestate")
    }

    /// Runs to completion with `line` split on spaces.
    pub fn line(&self, line: &str) -> Output {
        self.run(&words(line))
    }
}

/// Runs the binary in `cwd` ([`Bin::new`]) plus `env`, optionally feeding stdin.
pub fn run_with(cwd: &Path, args: &[String], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let bin = Bin::new(cwd).envs(env);
    match stdin {
        Some(text) => bin.stdin(text).run(args),
        None => bin.run(args),
    }
}

pub fn run_in(cwd: &Path, args: &[String], stdin: Option<&str>) -> Output {
    run_with(cwd, args, &[], stdin)
}

/// Runs a command that must succeed and print one JSON document.
pub fn ok_json(cwd: &Path, line: &str) -> Value {
    parse_ok(&words(line), &run_in(cwd, &words(line), None))
}

pub fn parse_ok(args: &[String], out: &Output) -> Value {
    assert!(out.status.success(), "{args:?}: {}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Owned arguments from string slices.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `--store DIR/st` then `rest`: a verb on the local store in `dir/st`.
pub fn store_args(dir: &Path, rest: &[&str]) -> Vec<String> {
    let mut a = vec!["--store".to_string(), dir.join("st").display().to_string()];
    a.extend(rest.iter().map(|s| s.to_string()));
    a
}

/// Runs `line` in `dir` on the local store `dir/st`, killing it if it is still running after a
/// minute (a hang is the bug under test; a correct run takes well under a second).
pub fn run_guarded(dir: &Path, line: &str) -> Output {
    let mut args = vec!["--store".to_string(), dir.join("st").display().to_string()];
    args.extend(words(line));
    let mut child = Bin::new(dir)
        .command(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("{line}: still running after a minute: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// [`run_guarded`], which must succeed with `--json` and print one JSON document.
pub fn guarded_json(dir: &Path, line: &str) -> Value {
    let out = run_guarded(dir, &format!("{line} --json"));
    assert!(out.status.success(), "{line}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}
