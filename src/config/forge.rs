//! The `[forge]` table and how flags, environment and file combine into the forge settings.
//!
//! Precedence, per setting: flag (`--url`, `--owner`, `--repo`, `--token-file`), then environment
//! (`FORGESTATE_URL`, `FORGESTATE_OWNER`, `FORGESTATE_REPO`, `FORGESTATE_TOKEN`), then the file.
//! The token is never taken from argv: only from `$FORGESTATE_TOKEN` or a file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::overrides::Overrides;
use super::settings::ForgeOptions;
use super::wait::{layered, parse_wait};
use crate::defaults;
use crate::durable::DrainPolicy;
use crate::error::{Error, Result};
use crate::format::MIN_SECRET_CHARS;

/// The default session issue title (see [`crate::defaults`]).
pub const DEFAULT_TITLE: &str = defaults::TITLE;

/// The `[forge]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForgeConfig {
    /// The forge's base URL (`https://forge.example.com`); `/api/v1` may be included.
    pub url: Option<String>,
    /// The repository owner (user or organisation).
    pub owner: Option<String>,
    /// The repository name.
    pub repo: Option<String>,
    /// A file holding the API token (one line; the token is never accepted inline).
    pub token_file: Option<PathBuf>,
    /// The exact title of the session issue.
    pub title: Option<String>,
    /// The label the session issue carries.
    pub label: Option<String>,
    /// The label's colour (six hex digits), when forgestate creates it.
    pub label_color: Option<String>,
    /// The label's description, when forgestate creates it.
    pub label_description: Option<String>,
    /// Whether writes may create the session issue when there is none.
    pub auto_init: Option<bool>,
    /// Seconds to wait for a connection.
    pub connect_timeout_secs: Option<u64>,
    /// Seconds one request may take in all.
    pub request_timeout_secs: Option<u64>,
    /// Seconds a cached session issue is trusted before a write re-checks it.
    pub recheck_secs: Option<u64>,
    /// Where to cache the session issue number.
    pub cache_dir: Option<PathBuf>,
    /// Seconds all retries of one request may take together.
    pub retry_budget_secs: Option<u64>,
    /// Milliseconds per attempt of quick (single-try) requests.
    pub quick_timeout_ms: Option<u64>,
    /// How long one command may wait for a forge that does not answer, e.g. `"3s"`.
    pub wait: Option<String>,
    /// How long a command without an answer of its own (a cold read, `rotate`, ...) may wait
    /// for the forge, e.g. `"60s"`.
    pub patience: Option<String>,
    /// Refuse answers larger than this many MiB.
    pub max_response_mib: Option<usize>,
    /// Allow plain `http://` off loopback.
    pub allow_insecure_http: Option<bool>,
    /// The root of the outbox directories.
    pub outbox_dir: Option<PathBuf>,
    /// Seconds each command may spend draining the outbox.
    pub drain_budget_secs: Option<u64>,
    /// The longest wait, in seconds, between drain attempts of one entry.
    pub drain_max_backoff_secs: Option<u64>,
    /// Rotate the session issue past this many comments (0: never).
    pub rotate_after: Option<u64>,
    /// A rotation carries the sessions active within this many days.
    pub carry_days: Option<u64>,
}

/// The numeric `[forge]` keys: name, accepted range (inclusive) and unit. Larger values would
/// overflow a deadline or a byte count; zero timeouts could never succeed.
const RANGES: [(&str, u64, u64, &str); 10] = [
    ("connect_timeout_secs", 1, 3_600, "seconds"),
    ("request_timeout_secs", 1, 3_600, "seconds"),
    ("recheck_secs", 0, 31_536_000, "seconds"),
    ("retry_budget_secs", 0, 86_400, "seconds"),
    ("quick_timeout_ms", 1, 60_000, "milliseconds"),
    ("max_response_mib", 1, 4_096, "MiB"),
    ("drain_budget_secs", 0, 3_600, "seconds"),
    ("drain_max_backoff_secs", 0, 86_400, "seconds"),
    ("rotate_after", 0, 1_000_000, "comments"),
    ("carry_days", 1, 36_500, "days"),
];

impl ForgeConfig {
    /// Checks the numeric keys against their ranges; the error names the key and the range.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let values = [
            self.connect_timeout_secs,
            self.request_timeout_secs,
            self.recheck_secs,
            self.retry_budget_secs,
            self.quick_timeout_ms,
            self.max_response_mib
                .map(|v| u64::try_from(v).unwrap_or(u64::MAX)),
            self.drain_budget_secs,
            self.drain_max_backoff_secs,
            self.rotate_after,
            self.carry_days,
        ];
        for ((key, min, max, unit), value) in RANGES.into_iter().zip(values) {
            if let Some(v) = value
                && !(min..=max).contains(&v)
            {
                return Err(format!(
                    "[forge] {key} = {v} is out of range; use {min} to {max} ({unit})"
                ));
            }
        }
        if let Some(text) = &self.wait {
            parse_wait(text, "[forge] wait")?;
        }
        if let Some(text) = &self.patience {
            parse_wait(text, "[forge] patience")?;
        }
        for (key, value) in [("title", &self.title), ("label", &self.label)] {
            if let Some(v) = value
                && v.trim().is_empty()
            {
                return Err(format!(
                    "[forge] {key} = {v:?} is empty; give the session issue's {key} some text, \
                     or remove the key for the default"
                ));
            }
        }
        Ok(())
    }

    /// `self` with the keys set in `over` replacing ours.
    pub fn overlay(self, over: ForgeConfig) -> ForgeConfig {
        macro_rules! keys {
            ($($k:ident),*) => { ForgeConfig { $($k: over.$k.or(self.$k)),* } };
        }
        keys! {
            url, owner, repo, token_file, title, label, label_color, label_description, auto_init,
            connect_timeout_secs, request_timeout_secs, recheck_secs, cache_dir, retry_budget_secs,
            quick_timeout_ms, wait, patience, max_response_mib, allow_insecure_http, outbox_dir,
            drain_budget_secs, drain_max_backoff_secs, rotate_after, carry_days
        }
    }
}

/// What the environment said, captured once.
#[derive(Debug, Clone, Default)]
pub struct ForgeEnv {
    /// `$FORGESTATE_URL`.
    pub url: Option<String>,
    /// `$FORGESTATE_OWNER`.
    pub owner: Option<String>,
    /// `$FORGESTATE_REPO`.
    pub repo: Option<String>,
    /// `$FORGESTATE_TOKEN` (a secret: never printed or logged).
    pub token: Option<SecretString>,
    /// `forgestate/` under `$XDG_CACHE_HOME` (else `~/.cache`): the issue cache.
    pub cache_home: Option<PathBuf>,
    /// `forgestate/` under `$XDG_STATE_HOME` (else `~/.local/state`): the outbox.
    pub state_home: Option<PathBuf>,
    /// `$FORGESTATE_WAIT`, as written (checked when the settings are resolved).
    pub wait: Option<String>,
    /// `$FORGESTATE_PATIENCE`, as written (checked when the settings are resolved).
    pub patience: Option<String>,
}

impl ForgeEnv {
    /// Reads the forge settings from `env`; blank values count as unset.
    pub fn capture(env: &dyn Fn(&str) -> Option<String>) -> ForgeEnv {
        let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let xdg = |var: &str, under_home: &[&str]| {
            get(var)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| {
                    get("HOME").map(|h| under_home.iter().fold(PathBuf::from(h), |p, c| p.join(c)))
                })
                .map(|d| d.join("forgestate"))
        };
        ForgeEnv {
            cache_home: xdg("XDG_CACHE_HOME", &[".cache"]),
            state_home: xdg("XDG_STATE_HOME", &[".local", "state"]),
            url: get("FORGESTATE_URL"),
            owner: get("FORGESTATE_OWNER"),
            repo: get("FORGESTATE_REPO"),
            wait: get("FORGESTATE_WAIT"),
            patience: get("FORGESTATE_PATIENCE"),
            token: get("FORGESTATE_TOKEN")
                .map(|t| clean_token(&t).to_string())
                .filter(|t| !t.is_empty())
                .map(SecretString::from),
        }
    }
}

/// The forge URL in force, if any: flag, then environment, then file.
pub fn forge_url(file: Option<&ForgeConfig>, env: &ForgeEnv, over: &Overrides) -> Option<String> {
    over.url
        .clone()
        .or_else(|| env.url.clone())
        .or_else(|| file.and_then(|f| f.url.clone()))
        .filter(|u| !u.trim().is_empty())
}

/// Reads the token: `--token-file`, then `$FORGESTATE_TOKEN`, then `[forge] token_file`.
fn token(
    file: &ForgeConfig,
    env: &ForgeEnv,
    over: &Overrides,
    base: &Path,
) -> Result<SecretString> {
    let from_file = |path: &Path| -> Result<(SecretString, String)> {
        if path.is_dir() {
            return Err(Error::config(format!(
                "the token file {} is a directory; name the file that holds the token (--token-file \
                 FILE or [forge] token_file), or set $FORGESTATE_TOKEN",
                path.display()
            )));
        }
        check_token_file(path)?;
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::config(format!(
                "cannot read the token file {}: {e}; name a readable UTF-8 file holding only the \
                 token (--token-file FILE or [forge] token_file), or set $FORGESTATE_TOKEN",
                path.display()
            ))
        })?;
        let token = clean_token(&text);
        if token.is_empty() {
            return Err(Error::config(format!(
                "the token file {} is empty",
                path.display()
            )));
        }
        let from = format!("the token file {}", path.display());
        Ok((SecretString::from(token.to_string()), from))
    };
    let (token, from) = if let Some(path) = &over.token_file {
        from_file(path)?
    } else if let Some(token) = &env.token {
        (token.clone(), "$FORGESTATE_TOKEN".to_string())
    } else if let Some(path) = &file.token_file {
        from_file(&base.join(path))?
    } else {
        return Err(Error::config(
            "no forge token was given; set $FORGESTATE_TOKEN, pass --token-file FILE, or set [forge] token_file \
             (tokens are never accepted as command-line values)",
        ));
    };
    let chars = token.expose_secret().chars().count();
    if chars < MIN_SECRET_CHARS {
        return Err(Error::config(format!(
            "the forge token in {from} is {chars} character(s) long, and a Forgejo or Gitea access \
             token has 40: give the whole token (the forge shows it once, when it is made)"
        )));
    }
    Ok(token)
}

/// A token as written in a file or variable, without surrounding whitespace or a byte-order
/// mark (editors on Windows add one), neither of which can be part of a token.
fn clean_token(raw: &str) -> &str {
    raw.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// Refuses a token file that someone else could write (writable by anyone, or owned by another
/// user than this one or root): whoever writes it chooses whose records this machine trusts as
/// its own. Warns when group or others may read it (a group-writable file too: with a umask of
/// 002 a user's own group is often theirs alone).
fn check_token_file(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let Ok(meta) = std::fs::metadata(path) else {
            return Ok(());
        };
        let mode = meta.permissions().mode() & 0o777;
        let owner = meta.uid();
        if mode & 0o002 != 0 {
            return Err(Error::config(format!(
                "the token file {} may be written by anyone (mode {mode:o}), who would choose \
                 whose records this machine trusts; run: chmod 600 {}",
                path.display(),
                path.display()
            )));
        }
        if owner != 0 && !crate::fsutil::owned_by_me(&meta) {
            return Err(Error::config(format!(
                "the token file {} is owned by another user (uid {owner}), who would choose whose \
                 records this machine trusts; keep the token in a file of your own (chmod 600)",
                path.display()
            )));
        }
        if mode & 0o077 != 0 {
            tracing::warn!(
                "the token file {} is readable by group or others (mode {mode:o}); run: chmod 600 {}",
                path.display(),
                path.display()
            );
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The outbox root: `[forge] outbox_dir`, else the XDG state dir. Each forge/owner/repo gets
/// its own directory under it.
pub fn outbox_root(file: &ForgeConfig, env: &ForgeEnv, base: &Path) -> Option<PathBuf> {
    match &file.outbox_dir {
        Some(dir) => Some(base.join(dir)),
        None => env.state_home.as_ref().map(|d| d.join("outbox")),
    }
}

/// The forge settings, filled in from flags, environment and the `[forge]` table, with the
/// defaults of [`crate::defaults`] for what none of them sets.
pub fn forge_options(
    url: String,
    (owner, repo): (String, String),
    file: &ForgeConfig,
    env: &ForgeEnv,
    over: &Overrides,
    base: &Path,
) -> Result<ForgeOptions> {
    file.validate().map_err(Error::config)?;
    let token = token(file, env, over, base)?;
    if token.expose_secret().contains(char::is_whitespace) {
        return Err(Error::setting(
            "token",
            "the forge token contains whitespace; check $FORGESTATE_TOKEN or the token file",
        ));
    }
    let d = ForgeOptions::new(url, owner, repo);
    let secs = |v: Option<u64>, or: Duration| v.map_or(or, |v| Duration::from_secs(v.max(1)));
    let or = |v: &Option<String>, or: String| v.clone().unwrap_or(or);
    Ok(ForgeOptions {
        token: Some(token),
        connect_timeout: secs(file.connect_timeout_secs, d.connect_timeout),
        request_timeout: secs(file.request_timeout_secs, d.request_timeout),
        retry_budget: file
            .retry_budget_secs
            .map_or(d.retry_budget, Duration::from_secs),
        wait: layered(
            "wait",
            d.wait,
            over.wait,
            env.wait.as_deref(),
            file.wait.as_deref(),
        )?,
        patience: layered(
            "patience",
            d.patience,
            over.patience,
            env.patience.as_deref(),
            file.patience.as_deref(),
        )?,
        recheck_after: file
            .recheck_secs
            .map_or(d.recheck_after, Duration::from_secs),
        quick_timeout: file
            .quick_timeout_ms
            .map_or(d.quick_timeout, |v| Duration::from_millis(v.max(1))),
        max_response_bytes: file.max_response_mib.map_or(d.max_response_bytes, |v| {
            v.max(1).saturating_mul(1024 * 1024)
        }),
        allow_insecure_http: over.allow_insecure_http
            || file.allow_insecure_http.unwrap_or(d.allow_insecure_http),
        auto_init: file.auto_init.unwrap_or(d.auto_init),
        rotate_after: file.rotate_after.unwrap_or(d.rotate_after),
        carry_days: file.carry_days.unwrap_or(d.carry_days),
        title: or(&file.title, d.title),
        label: or(&file.label, d.label),
        label_color: or(&file.label_color, d.label_color),
        label_description: or(&file.label_description, d.label_description),
        drain: DrainPolicy {
            budget: file
                .drain_budget_secs
                .map_or(d.drain.budget, Duration::from_secs),
            max_backoff: file
                .drain_max_backoff_secs
                .map_or(d.drain.max_backoff, Duration::from_secs),
        },
        cache_dir: file
            .cache_dir
            .as_ref()
            .map(|d| base.join(d))
            .or_else(|| env.cache_home.clone()),
        outbox: outbox_root(file, env, base),
        ..d
    })
}
