//! One backend (the local store, or a fresh fake forge) and a working directory, for tests that
//! run the real binary the same way on both and compare what it answers.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use super::cli::{Bin, parse_ok, words};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};

/// One backend, and a working directory for the binary.
pub struct World {
    dir: tempfile::TempDir,
    /// The fake forge, or `None` for the local store in `st/`.
    pub fake: Option<FakeForge>,
}

impl World {
    pub fn local() -> World {
        World {
            dir: tempfile::tempdir().unwrap(),
            fake: None,
        }
    }

    pub async fn forge() -> World {
        World {
            dir: tempfile::tempdir().unwrap(),
            fake: Some(FakeForge::start().await),
        }
    }

    /// The local store, then a fake forge.
    pub async fn both() -> [World; 2] {
        [World::local(), World::forge().await]
    }

    /// `local` or `forge`, for messages.
    pub fn name(&self) -> &'static str {
        if self.fake.is_some() {
            "forge"
        } else {
            "local"
        }
    }

    pub fn d(&self) -> &Path {
        self.dir.path()
    }

    /// The local store's directory (unused on the forge).
    pub fn store(&self) -> PathBuf {
        self.d().join("st")
    }

    /// Runs `line` (split on spaces) against this backend.
    pub fn run(&self, line: &str) -> Output {
        self.run_args(&words(line))
    }

    /// Runs `args` against this backend: the forge's coordinates in the environment, or
    /// `--store st`.
    pub fn run_args(&self, args: &[String]) -> Output {
        let mut args = args.to_vec();
        match &self.fake {
            Some(fake) => Bin::new(self.d())
                .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
                .run(&args),
            None => {
                args.extend(["--store".to_string(), self.store().display().to_string()]);
                Bin::new(self.d()).run(&args)
            }
        }
    }

    /// Runs `line`, with `--json` added unless it has one, and returns the answer; it must
    /// succeed.
    pub fn ok(&self, line: &str) -> Value {
        self.ok_args(&words(line).iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// [`World::ok`] for arguments that may hold spaces.
    pub fn ok_args(&self, args: &[&str]) -> Value {
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        if !args
            .iter()
            .any(|a| a == "--json" || a.starts_with("--json="))
        {
            args.push("--json".into());
        }
        parse_ok(&args, &self.run_args(&args))
    }

    /// Makes every record already in the store `secs` older: the local file's times move back;
    /// the forge's clock moves ahead (its `Date` header and every timestamp it writes).
    pub fn age_all(&self, secs: i64) {
        match &self.fake {
            Some(fake) => fake.state().clock_offset += secs,
            None => {
                let path = self.store().join(forgestate::store::THREAD_FILE);
                let text = std::fs::read_to_string(&path).unwrap();
                let mut out = String::new();
                for line in text.lines() {
                    let mut v: Value = serde_json::from_str(line).unwrap();
                    for key in ["created_at", "updated_at"] {
                        let t: chrono::DateTime<chrono::Utc> =
                            v[key].as_str().unwrap().parse().unwrap();
                        v[key] = json!(t - chrono::Duration::seconds(secs));
                    }
                    out.push_str(&v.to_string());
                    out.push('\n');
                }
                std::fs::write(&path, out).unwrap();
            }
        }
    }

    /// Every comment body in the store, in order.
    pub fn bodies(&self) -> Vec<String> {
        match &self.fake {
            Some(fake) => fake
                .state()
                .comments
                .iter()
                .map(|c| c.body.clone())
                .collect(),
            None => super::stored_bodies(&self.store()),
        }
    }

    /// How many of [`World::bodies`] are records.
    pub fn records(&self) -> usize {
        self.bodies()
            .iter()
            .filter(|b| forgestate::format::parse(b).is_ok())
            .count()
    }
}
