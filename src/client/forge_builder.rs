//! [`ForgeBuilder`]: the settings of a forge-backed client, in the style of octocrab's
//! builder, each with the documented default of [`crate::defaults`]; `build` is where a forge
//! client comes into being (called by the front door, `builder.rs`, for configured clients).

use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;

use super::Client;
use crate::backend::AnyThread;
use crate::config::ForgeOptions;
use crate::durable::{DrainPolicy, Origin, Outbox};
use crate::error::{Error, Result};
use crate::forge::retry::RetryPolicy;
use crate::forge::wait::Wait;
use crate::forge::{
    ForgeClient, ForgeClientBuilder, ForgeSettings, ForgeThread, RepoRef, store_key,
};
use crate::format::{Renderer, SessionIssue};
use crate::mirror::ReadCache;
use crate::resume::ResumeMap;

/// Settings for a forge-backed [`Client`]; see [`Client::forge`]. It wraps the same
/// [`ForgeOptions`] a configuration resolves to, plus what only a program can hand over.
#[derive(Debug)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct ForgeBuilder {
    options: ForgeOptions,
    pub(super) read_cache: ReadCache,
    trusted_authors: Vec<String>,
    resume: Option<ResumeMap>,
    renderer: Option<Renderer>,
}

impl ForgeBuilder {
    /// A builder holding every forge setting a configuration resolved.
    pub(super) fn from_options(options: ForgeOptions) -> ForgeBuilder {
        ForgeBuilder {
            options,
            read_cache: ReadCache::default(),
            trusted_authors: Vec::new(),
            resume: None,
            renderer: None,
        }
    }

    /// The API token (required). It stays a secret: never logged, printed or written.
    pub fn token(mut self, token: SecretString) -> Self {
        self.options.token = Some(token);
        self
    }

    /// The root under which each forge/owner/repo gets its own outbox directory. Without one,
    /// a record the forge cannot take now is an error instead of waiting on disk.
    pub fn outbox(mut self, root: impl Into<PathBuf>) -> Self {
        self.options.outbox = Some(root.into());
        self
    }

    /// Where to cache the session issue number, the read cache and the token's login; without
    /// one, nothing is cached. A directory another account owns or may write is not used (one
    /// warning names it).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.options.cache_dir = Some(dir.into());
        self
    }

    /// The session issue's title and label.
    pub fn issue(mut self, title: impl Into<String>, label: impl Into<String>) -> Self {
        self.options.title = title.into();
        self.options.label = label.into();
        self
    }

    /// Whether writes may create the session issue when there is none (default: yes).
    pub fn auto_init(mut self, on: bool) -> Self {
        self.options.auto_init = on;
        self
    }

    /// Connection and whole-request timeouts.
    pub fn timeouts(mut self, connect: Duration, request: Duration) -> Self {
        self.options.connect_timeout = connect;
        self.options.request_timeout = request;
        self
    }

    /// Total time for the retries of one request.
    pub fn retry_budget(mut self, budget: Duration) -> Self {
        self.options.retry_budget = budget;
        self
    }

    /// How long a cached session issue is trusted before a write re-checks it.
    pub fn recheck_after(mut self, after: Duration) -> Self {
        self.options.recheck_after = after;
        self
    }

    /// How long one command with an answer without the forge (a save spools, a warm read
    /// answers offline) may take in all (default 3 s): connecting, reading and retrying all end
    /// within it, and nothing renews it. After it the record is spooled and reads answer
    /// offline; for 30 s the next such command on the machine makes one quick attempt only. In
    /// a long-lived program each [`crate::verbs::call`] is a command (or call
    /// [`Client::begin_command`]).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.options.wait = wait;
        self
    }

    /// How long a command without an answer of its own (a cold read, `rotate`, `export`,
    /// `import`, `prune`, `doctor`, `init`, `publish`, `flush`) may wait for the forge to answer
    /// (default 60 s); each answer renews it, and a body is read as long as it flows.
    pub fn patience(mut self, patience: Duration) -> Self {
        self.options.patience = patience;
        self
    }

    /// The per-attempt timeout of quick probes.
    pub fn quick_timeout(mut self, timeout: Duration) -> Self {
        self.options.quick_timeout = timeout;
        self
    }

    /// Rotate the session issue once it holds more than this many comments (see
    /// [`Client::rotate`]); 0 turns automatic rotation off.
    pub fn rotate_after(mut self, comments: u64) -> Self {
        self.options.rotate_after = comments;
        self
    }

    /// Refuse answers larger than this.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.options.max_response_bytes = bytes;
        self
    }

    /// Allow plain `http://` off loopback (the token then crosses the network in clear).
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.options.allow_insecure_http = allow;
        self
    }

    /// How much of each command may go to draining the outbox.
    pub fn drain(mut self, policy: DrainPolicy) -> Self {
        self.options.drain = policy;
        self
    }

    /// Authors besides the token's own login whose records count.
    pub fn trusted_authors(mut self, authors: impl IntoIterator<Item = String>) -> Self {
        self.trusted_authors.extend(authors);
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
        let o = self.options;
        let token = o.token.ok_or_else(|| {
            Error::setting(
                "token",
                "no forge token was given; set $FORGESTATE_TOKEN, pass --token-file FILE, or set [forge] \
                 token_file (tokens are never accepted as command-line values)",
            )
        })?;
        for (name, value) in [("owner", &o.owner), ("repo", &o.repo)] {
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
        for (name, value) in [("title", &o.title), ("label", &o.label)] {
            if value.trim().is_empty() {
                return Err(Error::setting(
                    name,
                    format!(
                        "the session issue's {name} is empty: set [forge] {name} to some text, or remove it for the default"
                    ),
                ));
            }
        }
        let renderer = self.renderer.map_or_else(Renderer::embedded, Ok)?;
        let issue_body = renderer.session_issue(&SessionIssue {
            owner: o.owner.clone(),
            repo: o.repo.clone(),
            trusted: self.trusted_authors.join(", "),
        })?;
        let least = |d: Duration| d.max(Duration::from_millis(1));
        let http = ForgeClientBuilder {
            token: Some(token.clone()),
            connect_timeout: least(o.connect_timeout),
            request_timeout: least(o.request_timeout),
            policy: RetryPolicy::full(o.retry_budget),
            wait: Wait::with_patience(least(o.wait), o.patience, least(o.quick_timeout)),
            max_response_bytes: o.max_response_bytes.max(1),
            allow_insecure_http: o.allow_insecure_http,
            ..ForgeClient::builder(o.url)
        }
        .build()
        .map_err(|e| Error::setting("url", e.to_string()))?;
        let base = http.base().to_string();
        let key = store_key(&base, &o.owner, &o.repo);
        let settings = ForgeSettings {
            repo: RepoRef {
                owner: o.owner.clone(),
                repo: o.repo.clone(),
            },
            title: o.title,
            label: o.label,
            label_color: o.label_color,
            label_description: o.label_description,
            issue_body,
            auto_init: o.auto_init,
            cache_dir: o.cache_dir.clone(),
            recheck_after: o.recheck_after,
            quick_timeout: least(o.quick_timeout),
            rotate_after: o.rotate_after,
            carry_days: o.carry_days,
            trusted_authors: self.trusted_authors.clone(),
            is_record: |body| crate::format::marker_line(body).is_some(),
        };
        if let Some(root) = &o.outbox {
            (http.wait()).set_marker(root.join(&key).join(crate::forge::wait::MARKER_FILE));
        }
        let thread = ForgeThread::new(http, settings);
        let outbox = o.outbox.map(|root| {
            Outbox::new(root.join(&key)).with_origin(Origin {
                url: base.clone(),
                owner: o.owner.clone(),
                repo: o.repo.clone(),
            })
        });
        let resume = self.resume.unwrap_or_default();
        let mut client = Client::new(AnyThread::Forge(Box::new(thread)), renderer, resume)
            .with_trusted_authors(self.trusted_authors)
            // The token in use is scrubbed from every record, wherever it appears.
            .with_redact_secret(&token);
        if let Some(outbox) = outbox {
            client = client.with_outbox(outbox, o.drain);
        }
        if let Some(dir) = o
            .cache_dir
            .as_deref()
            .and_then(crate::forge::cache::usable_dir)
        {
            client = client.with_mirror_in(&dir, &key, self.read_cache, Some(token));
        }
        Ok(client)
    }
}
