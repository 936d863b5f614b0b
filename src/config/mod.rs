//! Configuration: the file format, where the file is found, and turning it into plain
//! [`Settings`] (the front door, `client/builder.rs`, builds the client from them).
//!
//! Layers, each over the one below: the built-in defaults, the file, the environment, and the
//! [`Overrides`] a program gives directly (the CLI fills them from its global flags).
//!
//! Which file, written down once: [`Overrides::config`] (`--config FILE`), then `$FORGESTATE_CONFIG`, then
//! `./forgestate.toml`, then `$XDG_CONFIG_HOME/forgestate/config.toml` (falling back to
//! `~/.config/forgestate/config.toml`). The first that applies is used; a file named explicitly
//! (flag or variable) must exist. Whatever file is used is laid over the built-in defaults
//! (a `./forgestate.toml` over the user's XDG file too, and it may not move trust or the token),
//! which are `config/forgestate.toml` compiled into the binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use secrecy::SecretString;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::format::{Renderer, TEMPLATE_NAMES, Templates, check_body_cap};
use crate::report::{StatusConfig, StatusPolicy};
use crate::resume::{ResumeConfig, ResumeMap};

mod checks;
mod coordinates;
mod discover;
mod forge;
mod overrides;
mod settings;
mod wait;

use discover::user_layer;
pub use discover::{Origin, discover};

use checks::{absolute, refuse_trust_settings, validate};

pub use coordinates::ForgeGiven;
pub use forge::{DEFAULT_TITLE, ForgeConfig, ForgeEnv};
pub use overrides::Overrides;
pub use settings::{DashboardSettings, ForgeOptions, Settings, StoreSettings};
pub use wait::parse_wait;

/// The documented example configuration, which doubles as the built-in defaults
/// ([`crate::defaults::CONFIG_TOML`]).
pub const DEFAULTS: &str = crate::defaults::CONFIG_TOML;

/// A configuration file as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Authors besides the token's own login whose records count.
    #[serde(default)]
    pub trusted_authors: Vec<String>,
    /// Keys whose values are replaced by `[REDACTED]` before writing (case-insensitive).
    pub redact_keys: Option<Vec<String>>,
    /// The `[local]` table.
    #[serde(default)]
    pub local: LocalConfig,
    /// The `[format]` table.
    #[serde(default)]
    pub format: FormatConfig,
    /// The `[resume]` table.
    #[serde(default)]
    pub resume: ResumeConfig,
    /// The `[forge]` table, when present.
    pub forge: Option<ForgeConfig>,
    /// The `[cache]` table: the read cache.
    #[serde(default)]
    pub cache: CacheConfig,
    /// The `[status]` table: when an agent is late, per agent glob.
    #[serde(default)]
    pub status: StatusConfig,
    /// The `[signing]` table: the key records are signed with, and older keys still believed.
    #[serde(default)]
    pub signing: SigningConfig,
    /// The `[dashboard]` table: the status table in the session issue's body.
    #[serde(default)]
    pub dashboard: DashboardConfig,
    /// The `[session]` table: how a writer treats the sessions it writes.
    #[serde(default)]
    pub session: SessionConfig,
}

/// The shortest signing key accepted, in bytes: a guessable key would let anyone sign.
pub const MIN_KEY_BYTES: usize = 16;

/// The `[signing]` table. `$FORGESTATE_SIGNING_KEY`, when set, is the signing key instead of
/// `key_file`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigningConfig {
    /// A file holding the signing key (one line of text; keep it private, like the token).
    pub key_file: Option<PathBuf>,
    /// Files holding older keys: records they signed are still believed (key rotation).
    #[serde(default)]
    pub verify_key_files: Vec<PathBuf>,
    /// Refuse every record without a signature, even those posted before the thread's first
    /// signed record (default false: those are believed, marked unsigned).
    pub require_signatures: Option<bool>,
}

/// The `[dashboard]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DashboardConfig {
    /// Whether checkpoints and health signals refresh the status table in the session issue's
    /// body (at most once every `every_minutes` per machine).
    pub auto: Option<bool>,
    /// Minutes between automatic refreshes from one machine (default 5).
    pub every_minutes: Option<u64>,
}

/// The `[session]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionConfig {
    /// Whether every checkpoint first reads its session (one warm request) and refuses, posting
    /// nothing, when another writer took the session over (default false: a plain save is one
    /// request, and readers ignore a fenced writer's record).
    pub check_owner: Option<bool>,
}

/// The `[cache]` table: the read cache.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Whether reads go through the read cache.
    pub enabled: Option<bool>,
    /// Seconds after which a forge's read cache is resynced fully.
    pub resync_secs: Option<u64>,
}

impl CacheConfig {
    /// The settings, with the built-in defaults for what is not set.
    pub fn settings(&self) -> crate::mirror::ReadCache {
        let d = crate::mirror::ReadCache::default();
        crate::mirror::ReadCache {
            enabled: self.enabled.unwrap_or(d.enabled),
            resync_after: self
                .resync_secs
                .map_or(d.resync_after, std::time::Duration::from_secs),
        }
    }
}

/// The `[local]` table: the local store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalConfig {
    /// The local store's directory.
    pub dir: Option<PathBuf>,
    /// The author of records written to the local store.
    pub author: Option<String>,
}

/// The `[format]` table: how records are rendered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatConfig {
    /// The largest comment body to write, in bytes.
    pub max_body_bytes: Option<usize>,
    /// A directory of template overrides (`checkpoint.md`, `health.md`, `session-issue.md`).
    pub templates_dir: Option<PathBuf>,
}

/// Where and why `text` is not a configuration file, without quoting the file: the line it
/// points at may be a token pasted as `token = "…"`, which must not reach the terminal.
fn syntax(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let place = match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: ")
        }
        None => String::new(),
    };
    let hint = match message.starts_with("unknown field `token`") {
        true => {
            "; the token never goes in a configuration file: put it alone in a file named by \
             [forge] token_file (mode 600), or in $FORGESTATE_TOKEN"
        }
        false => "",
    };
    format!("{place}{message}{hint}")
}

impl ConfigFile {
    /// Parses a configuration file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<ConfigFile> {
        toml::from_str(text)
            .map_err(|e| Error::config(format!("config file {origin}: {}", syntax(text, &e))))
    }

    /// `self` with `over` laid on top: keys set in `over` win; resume tables replace per agent.
    pub fn overlay(mut self, over: ConfigFile) -> ConfigFile {
        macro_rules! keys {
            ($($t:ident.$k:ident),*) => { $(self.$t.$k = over.$t.$k.or(self.$t.$k);)* };
        }
        keys! {
            local.dir, local.author, format.max_body_bytes, format.templates_dir, resume.default,
            cache.enabled, cache.resync_secs, signing.key_file, signing.require_signatures,
            dashboard.auto, dashboard.every_minutes, session.check_owner
        }
        self.trusted_authors.extend(over.trusted_authors);
        self.redact_keys = over.redact_keys.or(self.redact_keys);
        self.resume.agents.extend(over.resume.agents);
        let verify = over.signing.verify_key_files;
        self.signing.verify_key_files.extend(verify);
        self.status = self.status.overlay(over.status);
        self.forge = match (self.forge, over.forge) {
            (Some(base), Some(over)) => Some(base.overlay(over)),
            (base, over) => over.or(base),
        };
        self
    }
}

/// A loaded configuration: the built-in defaults with the chosen file laid over them.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file's settings over the built-in defaults.
    pub file: ConfigFile,
    /// Where the file came from.
    pub origin: Origin,
    /// Relative paths in the file are resolved against this directory.
    base_dir: PathBuf,
    /// Environment values that matter, captured at load time.
    env: BTreeMap<&'static str, String>,
    /// The forge settings from the environment (the token stays a `SecretString`).
    forge_env: ForgeEnv,
    /// The settings given directly, which beat everything else.
    overrides: Overrides,
    /// `$FORGESTATE_SIGNING_KEY` (a secret: never printed or logged).
    signing_env: Option<SecretString>,
}

impl Config {
    /// Loads the configuration from the real environment and working directory, with `over`
    /// laid over it (`Overrides::default()` for none), as the CLI does.
    pub fn load(over: Overrides) -> Result<Config> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::config(format!("cannot read the working directory: {e}")))?;
        Config::load_with(over, &|k| std::env::var(k).ok(), &cwd)
    }

    /// [`Config::load`] with the environment and working directory given, for tests and embedders.
    pub fn load_with(
        over: Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        cwd: &Path,
    ) -> Result<Config> {
        let defaults = ConfigFile::parse(DEFAULTS, "(built-in defaults)")?;
        let origin = discover(over.config.as_deref(), env, cwd);
        let (file, base_dir) = match origin.path() {
            None => (defaults, cwd.to_path_buf()),
            Some(path) => {
                let path = cwd.join(path);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    let how = match &origin {
                        Origin::Flag(_) => " (given with --config)",
                        Origin::Env(_) => " (named by $FORGESTATE_CONFIG)",
                        _ => "",
                    };
                    Error::config(format!(
                        "cannot read config file {}{how}: {e}",
                        path.display()
                    ))
                })?;
                let user = ConfigFile::parse(&text, &path.display().to_string())?;
                if matches!(origin, Origin::WorkingDir(_)) {
                    refuse_trust_settings(&user, &path)?;
                }
                let base = path
                    .parent()
                    .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf);
                let under = match origin {
                    Origin::WorkingDir(_) => match user_layer(env)? {
                        Some(layer) => defaults.overlay(layer),
                        None => defaults,
                    },
                    _ => defaults,
                };
                let file = under.overlay(user);
                validate(&file)
                    .map_err(|e| Error::config(format!("config file {}: {e}", path.display())))?;
                (file, base)
            }
        };
        let mut captured = BTreeMap::new();
        for key in ["USER", "USERNAME"] {
            if let Some(v) = env(key).filter(|v| !v.is_empty()) {
                captured.insert(key, v);
            }
        }
        Ok(Config {
            file,
            origin,
            base_dir,
            env: captured,
            forge_env: ForgeEnv::capture(env),
            overrides: over,
            signing_env: env("FORGESTATE_SIGNING_KEY").map(SecretString::from),
        })
    }

    fn resolve(&self, path: &Path) -> PathBuf {
        self.base_dir.join(path)
    }

    /// The renderer: built-in templates with any overrides, and the body cap.
    pub fn renderer(&self) -> Result<Renderer> {
        let cap = self
            .file
            .format
            .max_body_bytes
            .unwrap_or(crate::defaults::MAX_BODY_BYTES);
        let cap = check_body_cap(cap).map_err(Error::config)?;
        let mut templates = Templates::embedded();
        if let Some(dir) = &self.file.format.templates_dir {
            let dir = self.resolve(dir);
            if !dir.is_dir() {
                return Err(Error::config(format!(
                    "templates_dir {} is not a directory; create it or remove the setting",
                    dir.display()
                )));
            }
            for name in TEMPLATE_NAMES {
                let path = dir.join(name);
                if path.is_file() {
                    let source = std::fs::read_to_string(&path).map_err(|e| {
                        Error::config(format!("cannot read template {}: {e}", path.display()))
                    })?;
                    templates.replace(name, source);
                }
            }
        }
        Ok(Renderer::new(templates, cap)?)
    }

    /// The `[status]` table, compiled: thresholds per agent and the final resume points.
    pub fn status_policy(&self) -> Result<StatusPolicy> {
        StatusPolicy::new(&self.file.status).map_err(Error::config)
    }

    /// The resume map: the seed's, with the `[resume]` table laid over it.
    pub fn resume_map(&self) -> Result<ResumeMap> {
        ResumeMap::new(&self.file.resume).map_err(Error::config)
    }

    /// The forge URL in force, if any: the overrides' (`--url`), then `$FORGESTATE_URL`, then
    /// `[forge] url`.
    pub fn forge_url(&self) -> Option<String> {
        forge::forge_url(self.file.forge.as_ref(), &self.forge_env, &self.overrides)
    }

    /// Which forge coordinates the layers give (the URL in force, and whether an owner, a
    /// repository and a token are set anywhere), for a program that fills the gaps.
    pub fn forge_given(&self) -> ForgeGiven {
        let forge = self.file.forge.clone().unwrap_or_default();
        coordinates::given(&forge, &self.forge_env, &self.overrides, self.forge_url())
    }

    /// This configuration with `over` as its top layer instead of the overrides it was loaded
    /// with (the file stays the one loaded: [`Overrides::config`] is read only by
    /// [`Config::load`]). For a program that points one loaded configuration at another store
    /// or forge.
    pub fn with_overrides(mut self, over: Overrides) -> Config {
        self.overrides = over;
        self
    }

    /// The author of new local-store records, by the one rule of
    /// [`crate::defaults::local_author`]: `local.author`, else `$USER`, else `$USERNAME`, else
    /// `local`.
    fn local_author(&self) -> String {
        crate::defaults::local_author(self.file.local.author.as_deref(), &|k| {
            self.env.get(k).cloned()
        })
    }

    /// The top layer: the overrides given to [`Config::load`] or [`Config::with_overrides`].
    pub fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// The directories holding this machine's outboxes: `[forge] outbox_dir` (when set) and the
    /// default under `$XDG_STATE_HOME`.
    pub fn outbox_roots(&self) -> Vec<PathBuf> {
        let configured = self.file.forge.clone().unwrap_or_default();
        let mut roots: Vec<PathBuf> = [configured, ForgeConfig::default()]
            .iter()
            .filter_map(|f| forge::outbox_root(f, &self.forge_env, &self.base_dir))
            .collect();
        roots.dedup();
        roots
    }

    /// Whether a forge is configured but no outbox can be (no `$XDG_STATE_HOME`, no `$HOME`,
    /// no `[forge] outbox_dir`).
    pub fn forge_without_outbox(&self) -> bool {
        let forge = self.file.forge.clone().unwrap_or_default();
        self.forge_url().is_some()
            && self.overrides.store.is_none()
            && forge::outbox_root(&forge, &self.forge_env, &self.base_dir).is_none()
    }

    /// The settings of the store the verbs should use: [`Overrides::store`] (`--store DIR`),
    /// else the forge when a URL is configured, else the local store ([`Settings::note`] says
    /// so then). The client is built from them by the front door:
    /// [`crate::Client::from_settings`], or [`Config::client`] and [`crate::Client::from_config`],
    /// which call it.
    pub fn settings(&self) -> Result<Settings> {
        let over = &self.overrides;
        let renderer = self.renderer()?;
        let resume = self.resume_map()?;
        let (store, note) = if let Some(dir) = &over.store {
            let dir = absolute(dir, "--store")?;
            let author = self.local_author();
            (StoreSettings::Local { dir, author }, None)
        } else if let Some(url) = self.forge_url() {
            let forge = self.file.forge.clone().unwrap_or_default();
            let names = coordinates::coordinates(&forge, &self.forge_env, over)?;
            let options =
                forge::forge_options(url, names, &forge, &self.forge_env, over, &self.base_dir)?;
            (StoreSettings::Forge(Box::new(options)), None)
        } else {
            let dir = self.local_dir()?;
            let note = format!(
                "no forge configured; using the local store in {}",
                dir.display()
            );
            let author = self.local_author();
            (StoreSettings::Local { dir, author }, Some(note))
        };
        Ok(Settings {
            store,
            renderer,
            resume,
            trusted_authors: self.file.trusted_authors.clone(),
            redact_keys: self.file.redact_keys.clone(),
            read_cache: self.file.cache.settings(),
            signing: self.signing_keys()?,
            require_signatures: self.file.signing.require_signatures.unwrap_or(false),
            dashboard: DashboardSettings {
                auto: self.file.dashboard.auto.unwrap_or(false),
                every: std::time::Duration::from_secs(
                    60 * self
                        .file
                        .dashboard
                        .every_minutes
                        .unwrap_or(crate::defaults::DASHBOARD_EVERY_MINUTES),
                ),
                policy: self.status_policy()?,
            },
            check_owner: self.file.session.check_owner.unwrap_or(false),
            note,
        })
    }

    /// The signing keys (each at least [`MIN_KEY_BYTES`] long): `$FORGESTATE_SIGNING_KEY` or `[signing] key_file` first (the one that
    /// signs), then `[signing] verify_key_files`. Empty when none is configured.
    pub fn signing_keys(&self) -> Result<Vec<crate::format::SigningKey>> {
        use secrecy::ExposeSecret;
        let read = |path: &Path| -> Result<crate::format::SigningKey> {
            let path = self.resolve(path);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                Error::config(format!(
                    "cannot read the signing key file {}: {e}",
                    path.display()
                ))
            })?;
            crate::format::SigningKey::new(text.trim_start_matches('\u{feff}')).ok_or_else(|| {
                Error::config(format!(
                    "the signing key file {} is empty; put the key in it or remove the setting",
                    path.display()
                ))
            })
        };
        let mut keys = Vec::new();
        match (&self.signing_env, &self.file.signing.key_file) {
            (Some(secret), _) => {
                let key =
                    crate::format::SigningKey::new(secret.expose_secret()).ok_or_else(|| {
                        Error::config(
                            "$FORGESTATE_SIGNING_KEY is set but empty; set it to the key, or unset \
                         it to sign nothing",
                        )
                    })?;
                keys.push(key);
            }
            (None, Some(path)) => keys.push(read(path)?),
            (None, None) => {}
        }
        for path in &self.file.signing.verify_key_files {
            keys.push(read(path)?);
        }
        if let Some(short) = keys.iter().map(|k| k.len()).find(|&n| n < MIN_KEY_BYTES) {
            return Err(Error::config(format!(
                "a signing key is {short} byte(s) long; use at least {MIN_KEY_BYTES} random \
                 bytes (say, the output of `openssl rand -hex 32`)"
            )));
        }
        if keys.is_empty() && !self.file.signing.verify_key_files.is_empty() {
            return Err(Error::config(
                "[signing] verify_key_files is set but there is no signing key; set \
                 $FORGESTATE_SIGNING_KEY or [signing] key_file",
            ));
        }
        Ok(keys)
    }

    /// This machine's per-user state directory (`$XDG_STATE_HOME/forgestate`, else
    /// `~/.local/state/forgestate`), if the environment names one: the outboxes and the CLI's
    /// lineage live under it.
    pub fn state_dir(&self) -> Option<&Path> {
        self.forge_env
            .state_home
            .as_deref()
            .filter(|d| d.is_absolute())
    }

    /// The local store directory as an absolute path: `local.dir` (relative to its file), else
    /// [`crate::defaults::LOCAL_DIR`] under the per-user state directory. Never the working
    /// directory.
    fn local_dir(&self) -> Result<PathBuf> {
        if let Some(dir) = &self.file.local.dir {
            return absolute(&self.resolve(dir), "local.dir");
        }
        match &self.forge_env.state_home {
            Some(state) if state.is_absolute() => Ok(state.join(crate::defaults::LOCAL_DIR)),
            _ => Err(Error::config(
                "no place for the local store: neither $XDG_STATE_HOME nor $HOME is set to an \
                 absolute path; pass --store DIR or set local.dir in the config file",
            )),
        }
    }
}
