//! One machine of the soak run: its own cache and outbox directories, running the release
//! `forgestate` binary as child processes (optionally killed with SIGKILL while they run).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every machine shares: the binary, the forge behind the proxy, the configuration.
pub struct Setup {
    pub bin: PathBuf,
    pub url: String,
    pub token: String,
    pub config: PathBuf,
}

/// How one `checkpoint` command ended.
pub enum Outcome {
    /// Exit 0: posted, or spooled to the outbox.
    Saved { id: String, spooled: bool },
    /// Killed by us while it ran.
    Killed,
    /// Any other end.
    Failed,
}

/// One `resume --json` answer: the step its phase names (`None`: a fresh start) and the
/// whole answer.
pub struct Resumed {
    pub step: Option<usize>,
    pub json: serde_json::Value,
}

impl Resumed {
    fn of(out: String) -> Resumed {
        let json: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        let step = step_of(json["phase"].as_str().unwrap_or_default());
        Resumed { step, json }
    }
}

/// The step a phase `step_NN` names.
pub fn step_of(phase: &str) -> Option<usize> {
    phase.strip_prefix("step_").and_then(|n| n.parse().ok())
}

/// A command that runs longer than this is killed (and counts as failed).
const HUNG: Duration = Duration::from_secs(90);

pub struct Machine {
    setup: Arc<Setup>,
    dir: PathBuf,
    /// `FORGESTATE_WRITER`, when the machine writes as a named writer.
    writer: Option<String>,
}

impl Machine {
    pub fn new(setup: Arc<Setup>, dir: PathBuf) -> Machine {
        let _ = std::fs::create_dir_all(&dir);
        Machine {
            setup,
            dir,
            writer: None,
        }
    }

    /// The machine, writing as `writer` (`FORGESTATE_WRITER`): the next worker a supervisor
    /// took a session over for (`examples/takeover_soak.rs`).
    #[allow(dead_code)]
    pub fn writing_as(mut self, writer: impl Into<String>) -> Machine {
        self.writer = Some(writer.into());
        self
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.setup.bin);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("stderr.log"));
        cmd.args(args)
            .current_dir(&self.dir)
            .env_clear()
            .env("HOME", &self.dir)
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .env("XDG_STATE_HOME", self.dir.join("state"))
            .env("XDG_CONFIG_HOME", self.dir.join("config"))
            .env("FORGESTATE_CONFIG", &self.setup.config)
            .env("FORGESTATE_URL", &self.setup.url)
            .env("FORGESTATE_OWNER", super::fake_forge::OWNER)
            .env("FORGESTATE_REPO", super::fake_forge::REPO)
            .env("FORGESTATE_TOKEN", &self.setup.token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log.map_or_else(|_| Stdio::null(), Stdio::from));
        if let Some(writer) = &self.writer {
            cmd.env("FORGESTATE_WRITER", writer);
        }
        cmd
    }

    /// Runs `args`; `kill_after` kills it with SIGKILL if it still runs then. Returns the exit
    /// code and stdout, or `None` when it was killed or could not start.
    pub fn run_killing(
        &self,
        args: &[&str],
        kill_after: Option<Duration>,
    ) -> Option<(i32, String)> {
        let mut child = self.command(args).spawn().ok()?;
        // Read stdout as it comes: a long answer (`list`) would otherwise fill the pipe and
        // block the child until it is killed.
        let reader = child.stdout.take().map(|mut stdout| {
            std::thread::spawn(move || {
                let mut out = String::new();
                let _ = stdout.read_to_string(&mut out);
                out
            })
        });
        let started = Instant::now();
        let deadline = kill_after.unwrap_or(HUNG).min(HUNG);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => return None,
            }
        };
        let out = reader.and_then(|r| r.join().ok()).unwrap_or_default();
        Some((status.code().unwrap_or(-1), out))
    }

    /// Runs `args` to its end (or [`HUNG`]).
    pub fn run(&self, args: &[&str]) -> Option<(i32, String)> {
        self.run_killing(args, None)
    }

    /// Worker `w`'s checkpoint of `step`.
    pub fn checkpoint(&self, w: usize, step: usize, kill_after: Option<Duration>) -> Outcome {
        let (agent, session, phase) = names(w, step);
        let set = format!("step={step}");
        let args: [&str; 10] = [
            "checkpoint",
            "--agent",
            &agent,
            "--session",
            &session,
            "--phase",
            &phase,
            "--set",
            &set,
            "--json",
        ];
        let Some((code, out)) = self.run_killing(&args, kill_after) else {
            return if kill_after.is_some() {
                Outcome::Killed
            } else {
                Outcome::Failed
            };
        };
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        match (code, doc["id"].as_str()) {
            (0, Some(id)) => Outcome::Saved {
                id: id.to_string(),
                spooled: doc["spooled"].is_string(),
            },
            _ => Outcome::Failed,
        }
    }

    /// Worker `w`'s `resume --json` on this machine, tried up to 20 times through faults;
    /// `None` when no try exited 0.
    pub fn resume(&self, w: usize) -> Option<Resumed> {
        let (agent, session, _) = names(w, 0);
        for _ in 0..20 {
            let args: [&str; 6] = ["resume", "--agent", &agent, "--session", &session, "--json"];
            if let Some((0, out)) = self.run(&args) {
                return Some(Resumed::of(out));
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        None
    }

    /// This machine's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every record `list --json` shows: (record id, session, phase).
    pub fn list(&self) -> Vec<(String, String, String)> {
        let Some((0, out)) = self.run(&["list", "--all", "--json"]) else {
            return Vec::new();
        };
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        doc["records"]
            .as_array()
            .map(|records| {
                records
                    .iter()
                    .map(|r| (text(&r["id"]), text(&r["session"]), text(&r["phase"])))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How many records wait in this machine's outboxes (dead letters not included).
    pub fn outbox_len(&self) -> usize {
        let root = self.dir.join("state").join("forgestate").join("outbox");
        let entries = |dir: &Path| {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .collect::<Vec<_>>()
        };
        entries(&root)
            .iter()
            .filter(|p| p.is_dir())
            .flat_map(|d| entries(d))
            .filter(|p| p.is_file())
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .count()
    }
}

/// Worker `w`'s agent and session, and the phase of `step`.
pub fn names(w: usize, step: usize) -> (String, String, String) {
    (
        format!("worker-{w:02}"),
        format!("soak-{w:02}"),
        format!("step_{step:02}"),
    )
}

/// The release binary: `bin` if given, else `target/release/forgestate`, built when missing.
pub fn binary(bin: Option<PathBuf>) -> Option<PathBuf> {
    if let Some(bin) = bin {
        // Absolute: the commands run in each machine's own directory.
        return std::fs::canonicalize(bin).ok().filter(|b| b.is_file());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let path = target.join("release").join("forgestate");
    if !path.is_file() {
        println!("soak: building {} first", path.display());
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let built = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--locked",
                "--quiet",
                "--bin",
                "forgestate",
            ])
            .status();
        if !built.is_ok_and(|s| s.success()) {
            return None;
        }
    }
    path.is_file().then_some(path)
}

/// A small deterministic generator (xorshift), one per worker.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}
