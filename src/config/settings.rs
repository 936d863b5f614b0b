//! What a loaded configuration resolves to: plain settings, with no client in them. The front
//! door (`Client::from_settings`, `Client::from_config` in `client/builder.rs`) turns them
//! into a client; configuration never builds one itself.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;

use crate::durable::DrainPolicy;
use crate::format::Renderer;
use crate::mirror::ReadCache;
use crate::resume::ResumeMap;

/// Every setting a client needs, resolved from flags, environment and file.
#[derive(Clone)]
pub struct Settings {
    /// Which store, and its own settings.
    pub store: StoreSettings,
    /// The renderer: templates and the body cap.
    pub renderer: Renderer,
    /// The resume map.
    pub resume: ResumeMap,
    /// Authors besides the token's own login (or the local author) whose records count.
    pub trusted_authors: Vec<String>,
    /// Keys whose values are redacted; `None` keeps the built-in list.
    pub redact_keys: Option<Vec<String>>,
    /// The read cache.
    pub read_cache: ReadCache,
    /// The signing keys: the first signs, every one is believed (empty: records are not
    /// signed, and unsigned records are believed).
    pub signing: Vec<crate::format::SigningKey>,
    /// With signing keys, refuse unsigned records posted before the thread's first signed one
    /// too (`[signing] require_signatures`).
    pub require_signatures: bool,
    /// The status table in the session issue's body (`[dashboard]`, with the `[status]`
    /// policy it is judged by).
    pub dashboard: DashboardSettings,
    /// Every checkpoint first reads its session and refuses a fenced writer, posting nothing
    /// (`[session] check_owner`).
    pub check_owner: bool,
    /// Said to the user when a default store was chosen on their behalf.
    pub note: Option<String>,
}

/// How the status table in the session issue's body is kept.
#[derive(Debug, Clone, Default)]
pub struct DashboardSettings {
    /// Checkpoints and health signals refresh it, at most once every `every` per machine.
    pub auto: bool,
    /// The least time between two automatic refreshes from one machine.
    pub every: Duration,
    /// The verdicts' thresholds.
    pub policy: crate::report::StatusPolicy,
}

/// The store a [`Settings`] names.
#[derive(Debug, Clone)]
pub enum StoreSettings {
    /// The local store in `dir`, new records authored as `author`.
    Local {
        /// The store's directory (absolute).
        dir: PathBuf,
        /// The author of new records (see [`crate::defaults::local_author`]).
        author: String,
    },
    /// A forge repository's session issue.
    Forge(Box<ForgeOptions>),
}

/// The forge settings, every one resolved (defaults from [`crate::defaults`] filled in).
#[derive(Debug, Clone)]
pub struct ForgeOptions {
    /// The forge's base URL, as given.
    pub url: String,
    /// The repository owner.
    pub owner: String,
    /// The repository name.
    pub repo: String,
    /// The API token (a client cannot be built without one).
    pub token: Option<SecretString>,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Whole-request timeout.
    pub request_timeout: Duration,
    /// Total time for the retries of one request.
    pub retry_budget: Duration,
    /// How long one command may wait for a forge that does not answer (`[forge] wait`).
    pub wait: Duration,
    /// How long a command without an answer of its own may wait (`[forge] patience`).
    pub patience: Duration,
    /// How long a cached session issue is trusted before a write re-checks it.
    pub recheck_after: Duration,
    /// The per-attempt timeout of quick probes.
    pub quick_timeout: Duration,
    /// Answers larger than this are refused.
    pub max_response_bytes: usize,
    /// Plain `http://` off loopback.
    pub allow_insecure_http: bool,
    /// Writes may create the session issue.
    pub auto_init: bool,
    /// Rotate after this many comments (0: never).
    pub rotate_after: u64,
    /// A rotation carries the sessions active within this many days.
    pub carry_days: u64,
    /// The session issue's title.
    pub title: String,
    /// The session issue's label.
    pub label: String,
    /// The colour of a label forgestate creates.
    pub label_color: String,
    /// The description of a label forgestate creates.
    pub label_description: String,
    /// The outbox drain policy.
    pub drain: DrainPolicy,
    /// Where the session issue number and the read cache are kept.
    pub cache_dir: Option<PathBuf>,
    /// The outbox root.
    pub outbox: Option<PathBuf>,
}

impl ForgeOptions {
    /// The settings for `owner/repo` on the forge at `url`, each other one at the documented
    /// default of [`crate::defaults`]; no token, cache or outbox.
    pub fn new(url: String, owner: String, repo: String) -> ForgeOptions {
        use crate::defaults as d;
        ForgeOptions {
            url,
            owner,
            repo,
            token: None,
            connect_timeout: Duration::from_secs(d::CONNECT_TIMEOUT_SECS),
            request_timeout: Duration::from_secs(d::REQUEST_TIMEOUT_SECS),
            retry_budget: Duration::from_secs(d::RETRY_BUDGET_SECS),
            wait: Duration::from_secs(d::WAIT_SECS),
            patience: Duration::from_secs(d::PATIENCE_SECS),
            recheck_after: Duration::from_secs(d::RECHECK_SECS),
            quick_timeout: Duration::from_millis(d::QUICK_TIMEOUT_MS),
            max_response_bytes: d::MAX_RESPONSE_MIB * 1024 * 1024,
            allow_insecure_http: d::ALLOW_INSECURE_HTTP,
            auto_init: d::AUTO_INIT,
            rotate_after: d::ROTATE_AFTER,
            carry_days: d::CARRY_DAYS,
            title: d::TITLE.to_string(),
            label: d::LABEL.to_string(),
            label_color: d::LABEL_COLOR.to_string(),
            label_description: d::LABEL_DESCRIPTION.to_string(),
            drain: DrainPolicy::default(),
            cache_dir: None,
            outbox: None,
        }
    }
}
