//! The front door: every way to build a [`Client`], in one place.
//!
//! - [`Client::local`]: the embedded local store in a directory.
//! - [`Client::forge`]: a Forgejo or Gitea repository, configured with [`ForgeBuilder`]
//!   (`forge_builder.rs`) in the style of octocrab's builder; every setting has the documented
//!   default from [`crate::defaults`].
//! - [`Client::from_config`]: what the CLI does, from a loaded [`Config`]; the configuration
//!   resolves to plain [`Settings`] and [`Client::from_settings`] builds from them. Nothing
//!   else in the crate constructs a client over a backend.
//!
//! The default author of local-store records is one rule for every path:
//! [`crate::defaults::local_author`].

use std::path::PathBuf;

use super::{Client, ForgeBuilder};
use crate::backend::AnyThread;
use crate::config::{Config, ForgeOptions, Settings, StoreSettings};
use crate::defaults as d;
use crate::error::Result;
use crate::format::Renderer;
use crate::mirror::{LOCAL_NAME, ReadCache};
use crate::resume::ResumeMap;
use crate::store::LocalThread;

impl Client<AnyThread> {
    /// A client over the local store in `dir` (created on first write), with the seed's resume
    /// map. New records are authored as `$USER`, else `$USERNAME`, else `local` (the rule of
    /// [`crate::defaults::local_author`], the same as a configured local store's).
    ///
    /// Save, resume and list, end to end:
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use forgestate::{Client, format::Record, scan::Filter};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let client = Client::local(dir.path())?;
    ///
    /// // save: post a checkpoint (a forge that cannot take it now would spool it instead).
    /// let record = Record::checkpoint("implementation-worker", "s1", "clone_complete",
    ///     serde_json::json!({"issue_number": 42}))?;
    /// let posted = client.save(record).await.posted()?;
    /// assert_eq!(posted.record.agent, "implementation-worker");
    ///
    /// // resume: the newest checkpoint's phase, through the resume map, with its data.
    /// let answer = client.resume("implementation-worker", "s1").await?;
    /// assert_eq!(answer.resume.resume_point, "phase_2_subtasks");
    /// assert_eq!(answer.resume.data["issue_number"], 42);
    ///
    /// // list: the records a filter keeps (agent and session are globs), oldest first.
    /// let filter = Filter { agent: Some("implementation-*".into()), ..Filter::default() };
    /// let listed = client.list(&filter, None).await?;
    /// assert_eq!(listed.entries.len(), 1);
    /// assert_eq!(listed.entries[0].record.session, "s1");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn local(dir: impl Into<PathBuf>) -> Result<Client<AnyThread>> {
        let author = d::local_author(None, &|k| std::env::var(k).ok());
        Client::local_as(dir, author)
    }

    /// [`Client::local`] with an explicit author for new records.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use forgestate::{Client, format::Record};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let client = Client::local_as(dir.path(), "ci-bot")?;
    /// let record = Record::health("monitor", "s1", "Active", serde_json::json!({"load": 1}), None)?;
    /// let posted = client.save(record).await.posted()?;
    /// let listed = client.list(&Default::default(), None).await?;
    /// assert_eq!(listed.entries[0].comment.author, "ci-bot");
    /// assert_eq!(listed.entries[0].comment.id, Some(posted.comment_id));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn local_as(
        dir: impl Into<PathBuf>,
        author: impl Into<String>,
    ) -> Result<Client<AnyThread>> {
        Client::from_settings(Settings {
            store: StoreSettings::Local {
                dir: dir.into(),
                author: author.into(),
            },
            renderer: Renderer::embedded()?,
            resume: ResumeMap::default(),
            trusted_authors: Vec::new(),
            redact_keys: None,
            read_cache: ReadCache::default(),
            signing: Vec::new(),
            require_signatures: false,
            dashboard: Default::default(),
            check_owner: false,
            note: None,
        })
    }

    /// The client that `settings` (what a [`Config`] resolves to, see [`Config::settings`])
    /// describe. Every constructor ends here, so the local and forge clients get the same
    /// trust, redaction and read-cache settings.
    pub fn from_settings(settings: Settings) -> Result<Client<AnyThread>> {
        let Settings {
            store,
            renderer,
            resume,
            trusted_authors,
            redact_keys,
            read_cache,
            signing,
            require_signatures,
            dashboard,
            check_owner,
            note: _,
        } = settings;
        let client = match store {
            StoreSettings::Local { dir, author } => {
                let thread = AnyThread::Local(LocalThread::new(dir.clone(), author));
                // The read cache lives beside the store's file.
                Client::new(thread, renderer, resume)
                    .with_trusted_authors(trusted_authors)
                    .with_mirror_in(&dir, LOCAL_NAME, read_cache, None)
            }
            StoreSettings::Forge(options) => ForgeBuilder::from_options(*options)
                .renderer(renderer)
                .resume_map(resume)
                .read_cache(read_cache)
                .trusted_authors(trusted_authors)
                .build()?,
        };
        // The key patterns replace the default list; the token stays scrubbed.
        let client = match redact_keys {
            Some(keys) => client.with_redact_keys(keys),
            None => client,
        };
        Ok(client
            .with_signing_keys(signing)
            .with_required_signatures(require_signatures)
            .with_dashboard(dashboard)
            .with_check_owner(check_owner))
    }

    /// Starts building a client over the session issue of `owner/repo` on the forge at `url`.
    /// Building sends nothing: the first verb finds (or creates) the session issue.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use forgestate::{Category, Client};
    /// use forgestate::store::Thread;
    /// use secrecy::SecretString;
    ///
    /// let outbox = tempfile::tempdir()?;
    /// let client = Client::forge("https://forge.example.com/api/v1", "acme", "app")
    ///     .token(SecretString::from("a-token-from-FORGESTATE_TOKEN"))
    ///     .outbox(outbox.path())
    ///     .build()?;
    /// // `/api/v1` is the client's business, not the caller's.
    /// assert_eq!(client.thread_raw().describe(), "acme/app on https://forge.example.com/");
    /// assert!(client.outbox().is_some());
    ///
    /// // A URL carrying credentials is refused, without echoing them.
    /// let Err(refused) = Client::forge("https://bot:hunter2@forge.example.com", "acme", "app")
    ///     .token(SecretString::from("a-token-from-FORGESTATE_TOKEN"))
    ///     .build()
    /// else {
    ///     panic!("a URL with a password was accepted");
    /// };
    /// assert_eq!(refused.category(), Category::Config);
    /// assert!(!refused.to_string().contains("hunter2"));
    /// # Ok(()) }
    /// ```
    pub fn forge(
        url: impl Into<String>,
        owner: impl Into<String>,
        repo: impl Into<String>,
    ) -> ForgeBuilder {
        ForgeBuilder::from_options(ForgeOptions::new(url.into(), owner.into(), repo.into()))
    }

    /// The client the CLI uses: `--store`, else the forge when a URL is configured, else the
    /// local store. See [`Config`] for where each setting comes from.
    ///
    /// The main path, end to end: connect from a configuration file, post a checkpoint and a
    /// health signal, resume, list with filters, and ask who is alive. The same file with a
    /// `[forge]` table (and `$FORGESTATE_TOKEN`) runs it against a Forgejo or Gitea issue.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use forgestate::config::{Config, Overrides};
    /// use forgestate::format::{Kind, Record};
    /// use forgestate::report::{StatusPolicy, Verdict};
    /// use forgestate::scan::Filter;
    /// use forgestate::Client;
    /// use serde_json::json;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let file = dir.path().join("forgestate.toml");
    /// std::fs::write(&file, "[local]\ndir = \"store\"\n\n[status]\nstalled_after_secs = 900\n")?;
    /// // Config::load(..) reads the real environment and working directory, as the CLI does.
    /// let over = Overrides { config: Some(file), ..Overrides::default() };
    /// let config = Config::load_with(over, &|_| None, dir.path())?;
    /// let client = Client::from_config(&config)?;
    ///
    /// let checkpoint = Record::checkpoint("implementation-worker", "s1", "clone_complete",
    ///     json!({"issue_number": 42, "branch_name": "fix-42"}))?
    ///     .with_handoff(Some("split the work into subtasks".into()), vec![])?;
    /// client.save(checkpoint).await.posted()?;
    /// let health = Record::health("implementation-orchestrator", "s1", "Active",
    ///     json!({"active_workers": 1}), Some("in 10 iterations"))?;
    /// client.save(health).await.posted()?;
    ///
    /// let answer = client.resume("implementation-worker", "s1").await?;
    /// assert_eq!(answer.resume.resume_point, "phase_2_subtasks");
    /// assert_eq!(answer.resume.next.as_deref(), Some("split the work into subtasks"));
    ///
    /// let health_only = Filter { agent: Some("implementation-*".into()), kind: Some(Kind::Health),
    ///     ..Filter::default() };
    /// assert_eq!(client.list(&health_only, None).await?.entries.len(), 1);
    ///
    /// let status = client.status(&Filter::default(), &config.status_policy()?).await?;
    /// assert!(status.rows.iter().all(|r| r.verdict == Verdict::Alive));
    /// assert_eq!(status.rows[0].stalled_after_secs, 900);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_config(config: &Config) -> Result<Client<AnyThread>> {
        config.client().map(|(client, _)| client)
    }

    /// Keeps this client's lineage on this machine (see [`Client::with_lineage_dir`]), where
    /// the CLI keeps it: for a forge, under `lineage/` in the machine's state directory
    /// `state_dir` (see [`Config::state_dir`]), one directory per forge, owner and repository
    /// (none without a state directory); for a local store, under `lineage/` in the store's
    /// directory, one directory per machine (its state directory and host name), so two
    /// machines sharing a store keep two lineages and a second writer is seen. The writer is
    /// left as it is: [`Client::with_kept_writer`] after this writes as the machine's writer,
    /// as a CLI command does.
    pub fn with_machine_lineage(self, state_dir: Option<&std::path::Path>) -> Client<AnyThread> {
        let dir = match self.thread_raw() {
            AnyThread::Forge(forge) => state_dir.map(|s| s.join("lineage").join(forge.store_key())),
            AnyThread::Local(local) => {
                let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .or_else(|_| std::fs::read_to_string("/etc/hostname"))
                    .unwrap_or_default();
                let state = state_dir
                    .map(|s| s.display().to_string())
                    .unwrap_or_default();
                let machine =
                    crate::format::context_hash(format!("{}\0{state}", host.trim()).as_bytes());
                let machine = machine.trim_start_matches("sha256:").to_string();
                Some(local.dir().join("lineage").join(machine))
            }
        };
        match dir {
            Some(dir) => self.with_lineage_dir(dir),
            None => self,
        }
    }
}

// The configuration's client constructors live here, with the front door, so that
// `src/config/` names no client (the layering test checks it).
impl Config {
    /// Builds the client over the chosen store ([`Config::settings`] through
    /// [`Client::from_settings`]), with an outbox when the store is a forge. The note says when
    /// a default store was chosen.
    pub fn client(&self) -> Result<(Client<AnyThread>, Option<String>)> {
        let settings = self.settings()?;
        let note = settings.note.clone();
        Ok((Client::from_settings(settings)?, note))
    }

    /// Opens the store the verbs should use: [`crate::config::Overrides::store`], else the forge
    /// when a URL is configured, else the local store. The second value is a note for the user
    /// when a default was chosen on their behalf.
    pub fn open_store(&self) -> Result<(AnyThread, Option<String>)> {
        let (client, note) = self.client()?;
        Ok((client.into_thread(), note))
    }
}
