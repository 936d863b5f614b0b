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
use crate::config::{Config, Origin, Overrides};
use crate::defaults::CLOCK_SKEW_WARN_SECS;
use crate::durable::OutboxSummary;
use crate::error::Error;
use crate::forge::{ForgeError, Probe};
use crate::store::{THREAD_FILE, Thread};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
            Check::new("config", Status::Fail, e.to_string()).fix(
                "fix the file or setting named above (see config/forgestate.toml for every key)",
            ),
        ],
    }
}

/// Runs every check against the configuration in force (`config` with `over` laid over it).
pub async fn run(config: &Config, over: &Overrides) -> Report {
    let mut checks = vec![config_check(&config.origin)];
    let client = match config.client(over) {
        Ok((client, _)) => client,
        Err(e) => {
            checks.push(
                Check::new("store", Status::Fail, format!("cannot open the store: {e}"))
                    .fix("fix the setting named above; `forgestate --help` lists the flags"),
            );
            return Report { checks };
        }
    };
    let thread = client.thread();
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
        Ok(_) => Check::new(
            "store",
            Status::Fail,
            format!("{} is not a regular file", file.display()),
        )
        .fix("move it away, or point --store or local.dir at another directory"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Check::new(
            "store",
            Status::Warn,
            format!("local store {}: no thread yet", dir.display()),
        )
        .fix("the first checkpoint creates it, or run `forgestate init`"),
        Err(e) => Check::new("store", Status::Fail, format!("{}: {e}", file.display()))
            .fix("check the directory's permissions"),
    }
}

/// The forge checks; returns the token's login when it is known.
fn forge_checks(p: &Probe, checks: &mut Vec<Check>) -> Option<String> {
    let unreachable = p.version.as_ref().is_err_and(|e| e.status().is_none());
    checks.push(match &p.version {
        Ok(v) => Check::ok("forge", format!("{} at {}", v.describe(), p.base)),
        Err(ForgeError::Unauthorized { .. }) => Check::ok(
            "forge",
            format!(
                "{} answers (it refused the token before telling its version)",
                p.base
            ),
        ),
        Err(e) if unreachable => Check::new("forge", Status::Fail, e.to_string()).fix(
            "check the url (--url, FORGESTATE_URL or [forge] url), the network, and that the \
             forge is up; records are kept in the outbox meanwhile",
        ),
        Err(e) => Check::new("forge", Status::Warn, format!("answers, but: {e}")),
    });
    let skip = |name, why: &str| Check::skip(name, format!("not checked: {why}"));
    let Some(user) = &p.user else {
        for name in [
            "token",
            "repository",
            "write access",
            "label",
            "session issue",
        ] {
            checks.push(skip(name, "the forge does not answer"));
        }
        return None;
    };
    let login = user.as_ref().ok().map(|u| u.login.clone());
    checks.push(match user {
        Ok(u) => Check::ok("token", format!("valid; records are posted as {}", u.login)),
        Err(ForgeError::Unauthorized { .. }) => Check::new(
            "token",
            Status::Fail,
            "the forge rejected the token (401): unknown, revoked or mistyped",
        )
        .fix(
            "set FORGESTATE_TOKEN (or --token-file, [forge] token_file) to a valid personal \
             access token with the write:issue and read:user scopes",
        ),
        Err(ForgeError::Forbidden { .. }) => Check::new(
            "token",
            Status::Fail,
            "the token is valid but may not read its own user (403): it lacks the read:user scope",
        )
        .fix("create a token with the write:issue and read:user scopes"),
        Err(e) => Check::new("token", Status::Fail, e.to_string()),
    });
    let Some(repository) = &p.repository else {
        for name in ["repository", "write access", "label", "session issue"] {
            checks.push(skip(name, "the token is refused"));
        }
        return login;
    };
    match repository {
        Ok(r) => {
            checks.push(Check::ok("repository", format!("{} found", r.full_name)));
            checks.push(match (r.archived, r.write) {
                (true, _) => Check::new(
                    "write access",
                    Status::Fail,
                    format!("{} is archived: the forge refuses every write", r.full_name),
                )
                .fix("unarchive it, or point forgestate at another repository"),
                (false, Some(true)) => Check::ok(
                    "write access",
                    format!("{} may write to {}", who(&login), r.full_name),
                ),
                (false, Some(false)) => Check::new(
                    "write access",
                    Status::Warn,
                    format!(
                        "{} has no write access to {}: comments still post, but a new session \
                         issue would lose its label",
                        who(&login),
                        r.full_name
                    ),
                )
                .fix("give the user write access to the repository's issues"),
                (false, None) => Check::new(
                    "write access",
                    Status::Warn,
                    "unknown: the token lacks the read:repository scope, which shows the user's \
                     permissions (doctor never writes to find out)",
                )
                .fix("add the read:repository scope to the token to have this checked"),
            });
        }
        Err(e) => {
            let detail = match e {
                ForgeError::NotFound { .. } => format!(
                    "{} not found (404): it does not exist, or the token's user cannot see it",
                    p.repo
                ),
                e => e.to_string(),
            };
            checks.push(Check::new("repository", Status::Fail, detail).fix(
                "check the owner and repo (--repo OWNER/NAME, FORGESTATE_OWNER/FORGESTATE_REPO, or \
                 [forge] owner/repo) and that the token's user can read it",
            ));
            for name in ["write access", "label", "session issue"] {
                checks.push(skip(name, "the repository is not found"));
            }
            return login;
        }
    }
    checks.push(match &p.labels {
        Some(Ok(1)) => Check::ok("label", format!("{:?} present", p.label)),
        Some(Ok(0)) => Check::new(
            "label",
            Status::Fail,
            format!("no label {:?} in {}", p.label, p.repo),
        )
        .fix("run `forgestate init` (it creates the label), or set [forge] label"),
        Some(Ok(n)) => Check::new(
            "label",
            Status::Warn,
            format!("{n} labels are named {:?}", p.label),
        )
        .fix("delete the copies that are not on the session issue"),
        Some(Err(e)) => Check::new("label", Status::Fail, e.to_string()),
        None => skip("label", "the repository is not found"),
    });
    checks.push(match &p.issue {
        Some(Ok(Some(issue))) => Check::ok(
            "session issue",
            format!(
                "{} {} ({} comments)",
                issue.number, issue.html_url, issue.comments
            ),
        ),
        Some(Ok(None)) => Check::new(
            "session issue",
            Status::Fail,
            format!(
                "no open issue titled {:?} with label {:?} in {}",
                p.title, p.label, p.repo
            ),
        )
        .fix("run `forgestate init` to create it"),
        Some(Err(e)) => Check::new("session issue", Status::Fail, e.to_string()),
        None => skip("session issue", "the repository is not found"),
    });
    checks.push(clock_check(p));
    login
}

fn who(login: &Option<String>) -> String {
    login
        .clone()
        .unwrap_or_else(|| "the token's user".to_string())
}

fn clock_check(p: &Probe) -> Check {
    let Some(lag) = p.clock_lag else {
        return Check::skip("clock", "the forge sent no Date header");
    };
    let secs = lag.num_seconds();
    let how = match secs {
        s if s > 0 => format!("this machine is {s}s ahead of the forge"),
        s if s < 0 => format!("this machine is {}s behind the forge", -s),
        _ => "this machine and the forge agree".to_string(),
    };
    if secs.abs() > CLOCK_SKEW_WARN_SECS {
        Check::new("clock", Status::Warn, how).fix(
            "sync this machine's clock (NTP); forgestate measures ages on the forge's clock, \
             but Time: lines in records use this one",
        )
    } else {
        Check::ok("clock", how)
    }
}

fn cache_check(p: &Probe) -> Check {
    let Some(dir) = &p.cache_dir else {
        return Check::new(
            "cache",
            Status::Ok,
            "disabled: every run looks the issue up",
        );
    };
    let found = match &p.issue {
        Some(Ok(Some(issue))) => Some(issue.number.0),
        _ => None,
    };
    match (p.cache.issue, p.cache.current) {
        (None, _) => Check::ok(
            "cache",
            format!(
                "{}: no session issue cached yet (the next command caches it)",
                dir.display()
            ),
        ),
        (Some(n), false) => Check::ok(
            "cache",
            format!(
                "{}: #{n} was cached under another title or label; it is looked up again",
                dir.display()
            ),
        ),
        (Some(n), true) if found.is_some_and(|f| f != n) => Check::new(
            "cache",
            Status::Warn,
            format!(
                "{}: #{n} cached, but the session issue is #{}",
                dir.display(),
                found.unwrap_or_default()
            ),
        )
        .fix("nothing to do: the next write re-checks the cached issue and corrects it"),
        (Some(n), true) => {
            let age = p
                .cache
                .checked_at
                .map(|t| format!(", checked {}s ago", (Utc::now() - t).num_seconds().max(0)))
                .unwrap_or_default();
            Check::ok("cache", format!("{}: #{n} cached{age}", dir.display()))
        }
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
        (_, 0) => Check::new("outbox", Status::Warn, detail)
            .fix("run `forgestate flush` once the forge answers"),
        _ => Check::new("outbox", Status::Warn, detail)
            .fix("`forgestate outbox` lists them; fix what the forge refused, then flush"),
    }
}
