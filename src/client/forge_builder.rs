//! [`ForgeBuilder`]: the settings of a forge-backed client, in the style of octocrab's
//! builder, each with the documented default of [`crate::defaults`]; `build` is where a forge
//! client comes into being (called by the front door, `builder.rs`, for configured clients).

use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;

use super::Client;
use crate::backend::AnyThread;
use crate::config::ForgeOptions;
use crate::defaults as d;
use crate::durable::{DrainPolicy, Origin, Outbox};
use crate::error::{Error, Result};
use crate::forge::{ForgeClient, ForgeSettings, ForgeThread, RepoRef, store_key};
use crate::format::{Renderer, SessionIssue};
use crate::mirror::ReadCache;
use crate::resume::ResumeMap;

/// Settings for a forge-backed [`Client`]; see [`Client::forge`].
#[derive(Debug)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct ForgeBuilder {
    url: String,
    owner: String,
    repo: String,
    token: Option<SecretString>,
    outbox: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    pub(super) read_cache: ReadCache,
    title: String,
    label: String,
    label_color: String,
    label_description: String,
    auto_init: bool,
    connect_timeout: Duration,
    request_timeout: Duration,
    retry_budget: Duration,
    wait: Duration,
    recheck_after: Duration,
    quick_timeout: Duration,
    rotate_after: u64,
    carry_days: u64,
    max_response_bytes: usize,
    allow_insecure_http: bool,
    drain: DrainPolicy,
    trusted_authors: Vec<String>,
    redact_keys: Option<Vec<String>>,
    resume: Option<ResumeMap>,
    renderer: Option<Renderer>,
}

impl ForgeBuilder {
    pub(super) fn new(url: String, owner: String, repo: String) -> ForgeBuilder {
        ForgeBuilder {
            url,
            owner,
            repo,
            token: None,
            outbox: None,
            cache_dir: None,
            read_cache: ReadCache::default(),
            title: d::TITLE.to_string(),
            label: d::LABEL.to_string(),
            label_color: d::LABEL_COLOR.to_string(),
            label_description: d::LABEL_DESCRIPTION.to_string(),
            auto_init: d::AUTO_INIT,
            connect_timeout: Duration::from_secs(d::CONNECT_TIMEOUT_SECS),
            request_timeout: Duration::from_secs(d::REQUEST_TIMEOUT_SECS),
            retry_budget: Duration::from_secs(d::RETRY_BUDGET_SECS),
            wait: Duration::from_secs(d::WAIT_SECS),
            recheck_after: Duration::from_secs(d::RECHECK_SECS),
            quick_timeout: Duration::from_millis(d::QUICK_TIMEOUT_MS),
            rotate_after: d::ROTATE_AFTER,
            carry_days: d::CARRY_DAYS,
            max_response_bytes: d::MAX_RESPONSE_MIB * 1024 * 1024,
            allow_insecure_http: d::ALLOW_INSECURE_HTTP,
            drain: DrainPolicy::default(),
            trusted_authors: Vec::new(),
            redact_keys: None,
            resume: None,
            renderer: None,
        }
    }

    /// A builder holding every forge setting a configuration resolved.
    pub(super) fn from_options(o: ForgeOptions) -> ForgeBuilder {
        let mut b = ForgeBuilder::new(o.url, o.owner, o.repo)
            .token(o.token)
            .timeouts(o.connect_timeout, o.request_timeout)
            .retry_budget(o.retry_budget)
            .wait(o.wait)
            .recheck_after(o.recheck_after)
            .quick_timeout(o.quick_timeout)
            .max_response_bytes(o.max_response_bytes)
            .allow_insecure_http(o.allow_insecure_http)
            .auto_init(o.auto_init)
            .rotate_after(o.rotate_after)
            .carry_days(o.carry_days)
            .issue(o.title, o.label)
            .label_style(o.label_color, o.label_description)
            .drain(o.drain);
        if let Some(dir) = o.cache_dir {
            b = b.cache_dir(dir);
        }
        if let Some(root) = o.outbox {
            b = b.outbox(root);
        }
        b
    }

    /// The API token (required). It stays a secret: never logged, printed or written.
    pub fn token(mut self, token: SecretString) -> Self {
        self.token = Some(token);
        self
    }

    /// The root under which each forge/owner/repo gets its own outbox directory. Without one,
    /// a record the forge cannot take now is an error instead of waiting on disk.
    pub fn outbox(mut self, root: impl Into<PathBuf>) -> Self {
        self.outbox = Some(root.into());
        self
    }

    /// Where to cache the session issue number, the read cache and the token's login; without
    /// one, nothing is cached. A directory another account owns or may write is not used (one
    /// warning names it).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The session issue's title and label.
    pub fn issue(mut self, title: impl Into<String>, label: impl Into<String>) -> Self {
        self.title = title.into();
        self.label = label.into();
        self
    }

    /// The colour and description of the label, when forgestate creates it.
    pub fn label_style(mut self, color: impl Into<String>, description: impl Into<String>) -> Self {
        self.label_color = color.into();
        self.label_description = description.into();
        self
    }

    /// Whether writes may create the session issue when there is none (default: yes).
    pub fn auto_init(mut self, on: bool) -> Self {
        self.auto_init = on;
        self
    }

    /// Connection and whole-request timeouts.
    pub fn timeouts(mut self, connect: Duration, request: Duration) -> Self {
        self.connect_timeout = connect;
        self.request_timeout = request;
        self
    }

    /// Total time for the retries of one request.
    pub fn retry_budget(mut self, budget: Duration) -> Self {
        self.retry_budget = budget;
        self
    }

    /// How long a cached session issue is trusted before a write re-checks it.
    pub fn recheck_after(mut self, after: Duration) -> Self {
        self.recheck_after = after;
        self
    }

    /// How long one command may wait for a forge that does not answer (default 3 s): connecting,
    /// reading and retrying all end within it, and any answer renews it. After it the record is
    /// spooled and reads answer offline; for 30 s the next command on the machine makes one
    /// quick attempt only. In a long-lived program each [`crate::verbs::call`] is a command
    /// (or call [`Client::begin_command`]).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The per-attempt timeout of quick probes.
    pub fn quick_timeout(mut self, timeout: Duration) -> Self {
        self.quick_timeout = timeout;
        self
    }

    /// Rotate the session issue once it holds more than this many comments (see
    /// [`Client::rotate`]); 0 turns automatic rotation off.
    pub fn rotate_after(mut self, comments: u64) -> Self {
        self.rotate_after = comments;
        self
    }

    /// A rotation carries forward the sessions active within this many days.
    pub fn carry_days(mut self, days: u64) -> Self {
        self.carry_days = days;
        self
    }

    /// Refuse answers larger than this.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Allow plain `http://` off loopback (the token then crosses the network in clear).
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }

    /// How much of each command may go to draining the outbox.
    pub fn drain(mut self, policy: DrainPolicy) -> Self {
        self.drain = policy;
        self
    }

    /// Authors besides the token's own login whose records count.
    pub fn trusted_authors(mut self, authors: impl IntoIterator<Item = String>) -> Self {
        self.trusted_authors.extend(authors);
        self
    }

    /// Keys whose values are redacted (replaces the default list).
    pub fn redact_keys(mut self, keys: Vec<String>) -> Self {
        self.redact_keys = Some(keys);
        self
    }

    /// The resume map (default: the seed's, [`ResumeMap::default`]).
    pub fn resume_map(mut self, map: ResumeMap) -> Self {
        self.resume = Some(map);
        self
    }

    /// The renderer (default: the built-in templates and body cap).
    pub fn renderer(mut self, renderer: Renderer) -> Self {
        self.renderer = Some(renderer);
        self
    }

    /// Checks the settings and builds the client. Nothing is sent to the forge yet.
    pub fn build(self) -> Result<Client<AnyThread>> {
        let token = self.token.ok_or_else(|| {
            Error::setting(
                "token",
                "no forge token: set $FORGESTATE_TOKEN, pass --token-file FILE, or set [forge] \
                 token_file (tokens are never accepted as command-line values)",
            )
        })?;
        for (name, value) in [("owner", &self.owner), ("repo", &self.repo)] {
            if value.trim().is_empty() || value.contains('/') || value.contains(char::is_whitespace)
            {
                return Err(Error::setting(
                    name,
                    format!("forge {name} {value:?} must be a single name, without '/' or spaces"),
                ));
            }
            if let Some(why) = crate::forge::name_problem(value) {
                return Err(Error::setting(
                    name,
                    format!(
                        "forge {name} {why}: check --{name}, FORGESTATE_{} or [forge] {name}",
                        name.to_uppercase()
                    ),
                ));
            }
        }
        for (name, value) in [("title", &self.title), ("label", &self.label)] {
            if value.trim().is_empty() {
                return Err(Error::setting(
                    name,
                    format!(
                        "the session issue's {name} is empty: set [forge] {name} to some text, or remove it for the default"
                    ),
                ));
            }
        }
        let renderer = match self.renderer {
            Some(r) => r,
            None => Renderer::embedded()?,
        };
        let issue_body = renderer.session_issue(&SessionIssue {
            owner: self.owner.clone(),
            repo: self.repo.clone(),
            trusted: self.trusted_authors.join(", "),
        })?;
        let http = ForgeClient::builder(self.url)
            .token(token.clone())
            .connect_timeout(self.connect_timeout.max(Duration::from_millis(1)))
            .request_timeout(self.request_timeout.max(Duration::from_millis(1)))
            .retry_budget(self.retry_budget)
            .wait(
                self.wait.max(Duration::from_millis(1)),
                self.quick_timeout.max(Duration::from_millis(1)),
            )
            .max_response_bytes(self.max_response_bytes.max(1))
            .allow_insecure_http(self.allow_insecure_http)
            .build()
            .map_err(|e| Error::setting("url", e.to_string()))?;
        let base = http.base().to_string();
        let settings = ForgeSettings {
            repo: RepoRef {
                owner: self.owner.clone(),
                repo: self.repo.clone(),
            },
            title: self.title,
            label: self.label,
            label_color: self.label_color,
            label_description: self.label_description,
            issue_body,
            auto_init: self.auto_init,
            cache_dir: self.cache_dir.clone(),
            recheck_after: self.recheck_after,
            quick_timeout: self.quick_timeout.max(Duration::from_millis(1)),
            rotate_after: self.rotate_after,
            carry_days: self.carry_days,
            trusted_authors: self.trusted_authors.clone(),
        };
        if let Some(root) = &self.outbox {
            let dir = root.join(store_key(&base, &self.owner, &self.repo));
            http.wait()
                .set_marker(dir.join(crate::forge::wait::MARKER_FILE));
        }
        let thread = ForgeThread::new(http, settings);
        let outbox = self.outbox.map(|root| {
            Outbox::new(root.join(store_key(&base, &self.owner, &self.repo))).with_origin(Origin {
                url: base.clone(),
                owner: self.owner.clone(),
                repo: self.repo.clone(),
            })
        });
        let mut client = Client::new(
            AnyThread::Forge(Box::new(thread)),
            renderer,
            self.resume.unwrap_or_default(),
        )
        .with_trusted_authors(self.trusted_authors);
        if let Some(keys) = self.redact_keys {
            client = client.with_redact_keys(keys);
        }
        // The token in use is scrubbed from every record, wherever it appears.
        client = client.with_redact_secret(&token);
        if let Some(outbox) = outbox {
            client = client.with_outbox(outbox, self.drain);
        }
        if let Some(dir) = self
            .cache_dir
            .as_deref()
            .and_then(crate::forge::cache::usable_dir)
        {
            let name = store_key(&base, &self.owner, &self.repo);
            client = client.with_mirror_in(&dir, &name, self.read_cache, Some(token));
        }
        Ok(client)
    }
}
