//! Every built-in default, in one place. `config/forgestate.toml` documents them, and a test
//! checks that file against these values, so the two cannot drift apart.

/// The documented example configuration, `config/forgestate.toml`, compiled in: the built-in
/// layer every configuration is laid over, and the source of the seed's resume map.
pub const CONFIG_TOML: &str = include_str!("../config/forgestate.toml");

/// The session issue's exact title.
pub const TITLE: &str = "[Automated] CleverAgents Build Session";
/// The label the session issue carries.
pub const LABEL: &str = "Type/Automation";
/// The colour of a label forgestate creates.
pub const LABEL_COLOR: &str = "1d76db";
/// The description of a label forgestate creates.
pub const LABEL_DESCRIPTION: &str = "Issues created and maintained by automation";
/// Whether writes create the session issue when there is none.
pub const AUTO_INIT: bool = true;
/// Minutes between two automatic refreshes of the status table from one machine
/// (`[dashboard] every_minutes`).
pub const DASHBOARD_EVERY_MINUTES: u64 = 5;
/// Seconds a command that has an answer without the forge (a save spools, a warm read answers
/// offline) may take in all (`[forge] wait`), process start, connecting, reading and retrying
/// included; nothing renews it.
pub const WAIT_SECS: u64 = 3;
/// Seconds a command without such an answer (a cold read, `rotate`, ...) may wait for the forge
/// to answer (`[forge] patience`); each answer renews it.
pub const PATIENCE_SECS: u64 = 60;
/// Seconds to wait for a TCP/TLS connection.
pub const CONNECT_TIMEOUT_SECS: u64 = 5;
/// Seconds to wait for one whole request.
pub const REQUEST_TIMEOUT_SECS: u64 = 30;
/// How long a cached session issue number is trusted before a write re-checks it.
pub const RECHECK_SECS: u64 = 300;
/// Total seconds for the retries of one request.
pub const RETRY_BUDGET_SECS: u64 = 30;
/// The per-attempt timeout of a quick probe (the server version under `-v`).
pub const QUICK_TIMEOUT_MS: u64 = 800;
/// Answers larger than this many MiB are refused.
pub const MAX_RESPONSE_MIB: usize = 256;
/// Seconds of each command that may go to draining the outbox.
pub const DRAIN_BUDGET_SECS: u64 = 10;
/// The longest pause between drains after the forge failed.
pub const DRAIN_MAX_BACKOFF_SECS: u64 = 300;
/// Rotate the session issue once it holds more comments than this (0: never).
pub const ROTATE_AFTER: u64 = 2_000;
/// A rotation carries forward the sessions active within this many days.
pub const CARRY_DAYS: u64 = 30;
/// Whether plain `http://` is allowed off loopback.
pub const ALLOW_INSECURE_HTTP: bool = false;
/// Whether reads go through the read cache.
pub const CACHE_ENABLED: bool = true;
/// Seconds after which a forge read cache is fully resynced (deleted comments disappear).
pub const CACHE_RESYNC_SECS: u64 = 3600;
/// `status`: seconds without any record before an agent is `warning`.
pub const STATUS_WARN_AFTER_SECS: u64 = 600;
/// `status`: seconds without any record before an agent is `stalled`.
pub const STATUS_STALLED_AFTER_SECS: u64 = 1800;
/// `status`: resume points that mean the work is done (`completed`).
pub const FINAL_RESUME_POINTS: &[&str] = &["done"];

/// The local store's directory when `[local] dir` is not set: this name under the per-user state
/// directory (`$XDG_STATE_HOME/forgestate`, else `~/.local/state/forgestate`), so the store does
/// not change when an agent changes directory.
pub const LOCAL_DIR: &str = "local";

// The format's own defaults are defined with the format (which sits below this file) and
// listed here, so this file names every built-in default.

/// The largest comment body written by default, in bytes (`[format] max_body_bytes`).
pub use crate::format::DEFAULT_MAX_BODY_BYTES as MAX_BODY_BYTES;
/// The keys whose values are redacted by default (`redact_keys`).
pub use crate::format::DEFAULT_REDACT_KEYS as REDACT_KEYS;

/// The author of local-store records when nothing names one.
pub const LOCAL_AUTHOR: &str = "local";

/// The one rule for the author of new local-store records, for every way a local client is
/// built ([`crate::Client::local`], a configuration's `[local]` store, `--store`): the
/// configured author (`[local] author`), else `$USER`, else `$USERNAME`, else
/// [`LOCAL_AUTHOR`]; empty values count as unset.
pub fn local_author(configured: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> String {
    configured
        .map(str::to_string)
        .into_iter()
        .chain(env("USER"))
        .chain(env("USERNAME"))
        .find(|a| !a.trim().is_empty())
        .unwrap_or_else(|| LOCAL_AUTHOR.to_string())
}

// Command-line defaults of the operator verbs (flags, not configuration settings).

/// `watch`: seconds between polls while records arrive.
pub const WATCH_INTERVAL_SECS: u64 = 5;
/// `watch`: the longest pause between polls while the thread is idle (or the forge is down).
pub const WATCH_MAX_INTERVAL_SECS: u64 = 60;
/// `prune`: records kept per agent, session and kind (seed 000 keeps the last 10 checkpoints).
pub const PRUNE_KEEP: usize = 10;
/// `doctor`: clock skew against the forge's `Date` above which it warns.
pub const CLOCK_SKEW_WARN_SECS: i64 = 60;
