//! Doctor: diagnose a setup, one check per line, each passing or failing with the fix.
//!
//! The checks, in order: which configuration file won; which store; on a forge, whether it
//! answers (Forgejo or Gitea, and its version), the token and its login, the repository and
//! write access, the session label, the session issue, the clock against the server's `Date`;
//! then whom records are trusted from, the outbox and the issue-number cache. Nothing is written.
//! On the local store the forge checks are skipped, and say so. A check that cannot run because
//! an earlier one failed is skipped with the reason.

use chrono::Utc;
use serde::Serialize;

use crate::backend::AnyThread;
use crate::config::{Config, Origin};
use crate::durable::OutboxSummary;
use crate::error::Error;
use crate::store::{THREAD_FILE, Thread};

mod forge;

use forge::{cache_check, forge_checks};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Fine.
    Ok,
    /// Works, but worth a look.
    Warn,
    /// Broken: forgestate cannot work until it is fixed.
    Fail,
    /// Not checked (another check already explains why, or it does not apply).
    Skip,
}

/// One check. The JSON shape is stable: `name`, `status`, `ok`, `detail`, `fix`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Check {
    /// What was checked (`config`, `forge`, `token`, ...).
    pub name: &'static str,
    /// How it came out.
    pub status: Status,
    /// False only for [`Status::Fail`].
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do about it, when something should be done.
    pub fix: Option<String>,
}

impl Check {
    fn new(name: &'static str, status: Status, detail: impl Into<String>) -> Check {
        Check {
            name,
            status,
            ok: status != Status::Fail,
            detail: detail.into(),
            fix: None,
        }
    }

    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check::new(name, Status::Ok, detail)
    }

    fn warn(name: &'static str, detail: impl Into<String>) -> Check {
        Check::new(name, Status::Warn, detail)
    }

    fn fail(name: &'static str, detail: impl Into<String>) -> Check {
        Check::new(name, Status::Fail, detail)
    }

    fn skip(name: &'static str, detail: impl Into<String>) -> Check {
        Check::new(name, Status::Skip, detail)
    }

    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

/// Every check, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
}

impl Report {
    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.status == Status::Fail)
    }
}

/// The report when the configuration itself cannot be loaded.
pub fn config_failed(e: &Error) -> Report {
    Report {
        checks: vec![
            Check::fail("config", e.to_string()).fix(
                "fix the file or setting named above (see config/forgestate.toml for every key)",
            ),
        ],
    }
}

/// Runs every check against the configuration in force (with its overrides laid over it).
pub async fn run(config: &Config) -> Report {
    let mut checks = vec![config_check(&config.origin)];
    let client = match config.client() {
        Ok((client, _)) => client,
        Err(e) => {
            checks.push(
                Check::fail("store", format!("cannot open the store: {e}"))
                    .fix("fix the setting named above; `forgestate --help` lists the flags"),
            );
            return Report { checks };
        }
    };
    client.without_answer(Some("`doctor` has nothing to answer without the forge"));
    let thread = client.thread_raw();
    let login = match thread {
        AnyThread::Local(local) => {
            checks.push(local_check(local.dir()));
            checks.push(Check::skip(
                "forge",
                "the local store is in use; the forge checks (server, token, repository, label, \
                 session issue, clock) do not apply",
            ));
            checks.push(Check::skip(
                "cache",
                "the local store has no issue-number cache",
            ));
            thread.whoami().await.ok()
        }
        AnyThread::Forge(forge) => {
            checks.push(Check::ok(
                "store",
                format!("forge thread {}", forge.describe()),
            ));
            let probe = forge.probe().await;
            let login = forge_checks(&probe, &mut checks);
            checks.push(cache_check(&probe));
            login
        }
    };
    checks.push(trust_check(
        thread.trusts_everyone(),
        login,
        &config.file.trusted_authors,
    ));
    checks.push(outbox_check(client.outbox().map(|o| o.dir())));
    Report { checks }
}

fn config_check(origin: &Origin) -> Check {
    let detail = match origin {
        Origin::Flag(p) => format!("{} (named by --config)", p.display()),
        Origin::Env(p) => format!("{} (named by $FORGESTATE_CONFIG)", p.display()),
        Origin::WorkingDir(p) => format!("{} (in the working directory)", p.display()),
        Origin::Xdg(p) => format!("{} (the user's configuration)", p.display()),
        Origin::BuiltIn => "no configuration file; the built-in defaults".to_string(),
    };
    Check::ok("config", detail)
}

fn local_check(dir: &std::path::Path) -> Check {
    let file = dir.join(THREAD_FILE);
    match std::fs::metadata(&file) {
        Ok(m) if m.is_file() => Check::ok(
            "store",
            format!("local store {} ({} bytes)", file.display(), m.len()),
        ),
        Ok(_) => Check::fail("store", format!("{} is not a regular file", file.display()))
            .fix("move it away, or point --store or local.dir at another directory"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Check::warn(
            "store",
            format!("local store {}: no thread yet", dir.display()),
        )
        .fix("the first checkpoint creates it, or run `forgestate init`"),
        Err(e) => Check::fail("store", format!("{}: {e}", file.display()))
            .fix("check the directory's permissions"),
    }
}

fn trust_check(everyone: bool, login: Option<String>, configured: &[String]) -> Check {
    if everyone {
        return Check::ok(
            "trusted authors",
            "everyone who can write the store directory (the local store's boundary is the file \
             system)",
        );
    }
    let known = login.is_some();
    let mut names: Vec<String> = login.into_iter().collect();
    names.extend(configured.iter().cloned());
    names.sort();
    names.dedup();
    match (names.is_empty(), known) {
        (true, _) => Check::skip(
            "trusted authors",
            "not checked: records are trusted from the token's login, which is unknown",
        ),
        (false, true) => Check::ok(
            "trusted authors",
            format!("records are trusted from {}", names.join(", ")),
        ),
        (false, false) => Check::ok(
            "trusted authors",
            format!(
                "records are trusted from {} (and the token's login, once it is known)",
                names.join(", ")
            ),
        ),
    }
}

fn outbox_check(dir: Option<&std::path::Path>) -> Check {
    let Some(dir) = dir else {
        return Check::skip("outbox", "none: the local store writes directly");
    };
    let s = OutboxSummary::of(dir);
    let mut detail = match (s.waiting, s.oldest) {
        (0, _) => format!("{}: empty", dir.display()),
        (n, Some(oldest)) => format!(
            "{}: {n} record(s) waiting, the oldest spooled {}s ago",
            dir.display(),
            (Utc::now() - oldest).num_seconds().max(0)
        ),
        (n, None) => format!("{}: {n} record(s) waiting", dir.display()),
    };
    if s.dead_letters > 0 {
        detail.push_str(&format!(
            "; {} dead letter(s) (refused, never posted)",
            s.dead_letters
        ));
    }
    match (s.waiting, s.dead_letters) {
        (0, 0) => Check::ok("outbox", detail),
        (_, 0) => {
            Check::warn("outbox", detail).fix("run `forgestate flush` once the forge answers")
        }
        _ => Check::warn("outbox", detail)
            .fix("`forgestate outbox` lists them; fix what the forge refused, then flush"),
    }
}
