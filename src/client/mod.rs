//! The verbs, over any store: post records, read the thread, find the latest, resume.
//!
//! This is the only place where the format and a store meet. It redacts and renders a record,
//! hands the body to the durability layer ([`crate::durable::Durable`]), and on the way back
//! parses what the store lists. Trust is decided here too, so every backend applies the same
//! rules. Building a client is in `builder.rs` (the front door: [`Client::local`],
//! [`Client::forge`], [`Client::from_config`]).

mod builder;
mod cached;
mod clock;
mod export;
mod forge_builder;
mod gate;
mod init;
mod known;
mod linked;
pub mod prune;
mod publish;
mod query;
mod reads;
mod report;
mod rotate;
mod sessions;
mod takeover;
mod tidy;
pub mod watch;
mod writer;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;

pub use export::{Exported, Imported};
pub use forge_builder::ForgeBuilder;
pub use publish::Published;
pub use query::{ForkQuery, HistoryQuery, ListQuery};
pub use report::Status;
pub use rotate::{Rotation, to_carry};
pub use sessions::Write;
pub use takeover::TakenOver;
pub use tidy::Tidied;

use crate::durable::{DrainPolicy, Durable, FlushReport, Outbox, Saved};
use crate::error::{Error, Result};
use crate::format::{Record, Redactor, Renderer, SigningKey};
use crate::progress::ProgressHook;
use crate::resume::{Resume, ResumeMap};
use crate::scan::{Entry, Filter, Scan, Trust, edited_warning};
use crate::store::{Comment, Keep, Thread};

/// Where a posted record went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Posted {
    /// The record's own id.
    pub id: Option<String>,
    /// The store's comment id.
    pub comment_id: u64,
    /// The comment's web address, where the store has one.
    pub url: Option<String>,
    /// The store, as [`Thread::describe`] puts it.
    pub store: String,
    /// The record as posted (after redaction).
    pub record: Record,
    /// The automatic rotation this save triggered (the session issue was over
    /// `rotate_after` comments), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<Rotation>,
    /// Why the rotation this save made due failed (the record itself is posted; a later save
    /// tries again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation_failed: Option<String>,
    /// Why the automatic refresh of the status table (`[dashboard] auto`) failed, when it did
    /// (the record itself is posted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dashboard_failed: Option<String>,
}

/// What became of a record handed to [`Client::save`]. A spooled record or a failure must be
/// looked at: dropping the outcome unread would hide them.
#[derive(Debug)]
#[must_use = "a record may have been spooled or refused; look at the outcome"]
pub enum Outcome {
    /// It is in the thread.
    Posted(Posted),
    /// It is safe in the outbox and will be posted by a later command or `flush`.
    Spooled {
        /// The record as spooled (after redaction).
        record: Record,
        /// The outbox entry.
        path: PathBuf,
        /// Why it could not be posted now.
        cause: Error,
    },
    /// It could not be stored anywhere, or was refused.
    Failed(Error),
}

impl Outcome {
    /// The posted record, or the reason it was not posted.
    pub fn posted(self) -> Result<Posted> {
        match self {
            Outcome::Posted(p) => Ok(p),
            Outcome::Spooled { cause, .. } => Err(cause),
            Outcome::Failed(e) => Err(e),
        }
    }
}

/// What `latest` answers.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Latest {
    /// The newest matching record, with the comment that holds it; null when none matches.
    pub record: Option<Entry>,
    /// The store could not be read: the answer comes from this machine's read cache and outbox.
    pub offline: bool,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or is missing, or an `offline` answer); a warning says why.
    pub complete: bool,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// The answer of [`Client::resume`].
#[derive(Debug, Clone)]
pub struct Resumed {
    /// Where to pick up.
    pub resume: Resume,
    /// What the session's records say beyond the checkpoint: ended, a pending intent, writers
    /// that continued from the same record.
    pub session: crate::report::Facts,
    /// The whole thread was read: false when the read may have missed records (a forge whose
    /// comment list was cut short or missing, or no store at all: `offline`); a warning says why.
    pub complete: bool,
    /// What the store or the outbox noticed on the way.
    pub warnings: Vec<String>,
}

/// The verbs over one thread.
pub struct Client<T> {
    store: Durable<T>,
    renderer: Renderer,
    resume: ResumeMap,
    trusted_authors: BTreeSet<String>,
    redactor: Redactor,
    mirror: Option<crate::mirror::Mirror>,
    signing: Vec<SigningKey>,
    /// With signing keys: refuse every unsigned record, even those posted before the thread's
    /// first signed one.
    require_signatures: bool,
    dashboard: crate::config::DashboardSettings,
    /// Per (agent, session), the newest record id this client wrote or read back: its next
    /// record's `Parent:` (see `sessions.rs`).
    known: known::Known,
    /// The writer this client names on every record it writes (`Writer:`, see `writer.rs`).
    writer: writer::Who,
    /// Every checkpoint reads its session first and refuses a fenced writer (`check_owner`).
    check_owner: bool,
    /// Whether this client has said that the store's clocks disagree (said once per client:
    /// once per CLI command, once per MCP session).
    clock_warned: std::sync::atomic::AtomicBool,
}

impl<T: Thread> Client<T> {
    /// A client over any thread, with no outbox: see [`Client::with_outbox`].
    pub fn new(thread: T, renderer: Renderer, resume: ResumeMap) -> Client<T> {
        Client {
            store: Durable::new(thread, None, Default::default()),
            renderer,
            resume,
            trusted_authors: BTreeSet::new(),
            redactor: Redactor::default(),
            mirror: None,
            signing: Vec::new(),
            require_signatures: false,
            dashboard: Default::default(),
            known: known::Known::default(),
            writer: writer::Who::Named(writer::fresh()),
            check_owner: false,
            clock_warned: std::sync::atomic::AtomicBool::new(false),
        }
        .regate()
    }

    /// Trust these authors on top of the store's own identity.
    pub fn with_trusted_authors(mut self, authors: impl IntoIterator<Item = String>) -> Client<T> {
        self.trusted_authors.extend(authors);
        self
    }

    /// Redact the values of keys matching these patterns (see [`Redactor`]) before rendering.
    pub fn with_redact_keys(mut self, keys: Vec<String>) -> Client<T> {
        self.redactor = self.redactor.with_keys(keys);
        self.regate()
    }

    /// Also scrub this secret (the forge token in use) from every string of every record,
    /// spooled ones included: a spooled body that holds it is redacted on its way out (see
    /// [`Client::outbound`]), and one whose header holds it is never posted, but moved aside.
    pub fn with_redact_secret(mut self, secret: &secrecy::SecretString) -> Client<T> {
        self.redactor = self.redactor.with_secret(secret);
        self.regate()
    }

    /// Sign every record posted with the first of `keys`, and believe only records whose
    /// signature one of them made (the others are older keys, kept for rotation). A read with
    /// keys lists the thread itself, not the read cache, whose slots keep no whole bodies to
    /// check. See [`crate::format::sign`].
    pub fn with_signing_keys(mut self, keys: Vec<SigningKey>) -> Client<T> {
        for key in &keys {
            self.redactor = self.redactor.with_secret(key.secret());
        }
        self.signing = keys;
        self.regate()
    }

    /// With signing keys, whether a record without a signature is refused even when it was
    /// posted before the thread's first signed record (`[signing] require_signatures`). Off
    /// (the default), such older records are believed, marked `unsigned`, with one warning, so
    /// turning signing on for a thread that already exists keeps its history.
    pub fn with_required_signatures(mut self, require: bool) -> Client<T> {
        self.require_signatures = require;
        self
    }

    /// Keep the status table in the session issue's body as `dashboard` says (with
    /// `auto`, saves refresh it; rotation carries it with `dashboard.policy`).
    pub fn with_dashboard(mut self, dashboard: crate::config::DashboardSettings) -> Client<T> {
        self.dashboard = dashboard;
        self
    }

    /// Keep what this client knows of each session's lineage (the id of the newest record of
    /// each agent and session it saved or resumed) in `dir` as well as in memory, so the next
    /// client over `dir` (a fresh CLI process) writes the `Parent:` this one would have. One
    /// small private file per (agent, session), written atomically; no request is spent on it.
    pub fn with_lineage_dir(mut self, dir: impl Into<PathBuf>) -> Client<T> {
        self.known = known::Known::in_dir(dir.into());
        self
    }

    /// Write as `writer` (`Writer:` on every record; default: a fresh writer per client). The
    /// fencing rule (`crate::scan::fence`) judges records by it: after another writer takes
    /// the session over, this writer's records of it are fenced and its reads fail.
    pub fn with_writer(mut self, writer: impl Into<String>) -> Client<T> {
        self.writer = writer::Who::Named(writer.into());
        self
    }

    /// Write as a fresh writer, nobody else's (one per process that keeps its client: an MCP
    /// server, `call --lines` for one Python `Client`).
    pub fn with_fresh_writer(self) -> Client<T> {
        self.with_writer(writer::fresh())
    }

    /// Write as the writer kept in this client's lineage directory (one per machine's state
    /// directory: what the CLI does), made there on first use (the first write, or
    /// [`Client::writer`]: a read only reads it); without a lineage directory the writer stays
    /// as it is.
    pub fn with_kept_writer(mut self) -> Client<T> {
        if let Some(dir) = self.known.dir() {
            self.writer = writer::Who::kept_in(dir.to_path_buf());
        }
        self
    }

    /// Make every checkpoint read its session first (one warm request) and post nothing when
    /// another writer took it over ([`Write::check_owner`] on every write).
    pub fn with_check_owner(mut self, check: bool) -> Client<T> {
        self.check_owner = check;
        self
    }

    /// Whether every checkpoint checks its writer still owns the session first.
    pub fn checks_owner(&self) -> bool {
        self.check_owner
    }

    /// The writer this client names on the records it writes (the machine's is made now, when
    /// it has none yet).
    pub fn writer(&self) -> &str {
        self.writer.writing()
    }

    /// The writer a read judges fencing for: [`Client::writer`], but never made by a read.
    pub(crate) fn reading_writer(&self) -> &str {
        self.writer.reading()
    }

    /// The keys records are signed (the first) and checked with.
    pub fn signing_keys(&self) -> &[SigningKey] {
        &self.signing
    }

    /// A rendered body as it is posted: signed with the signing key, when there is one.
    pub(crate) fn seal(&self, body: String) -> String {
        match self.signing.first() {
            Some(key) => crate::format::sign(&body, key),
            None => body,
        }
    }

    /// What the signing keys make of a body: believed (always, with no keys), unsigned (no
    /// signature line, when unsigned records are allowed), or refused with why.
    pub(crate) fn doubt(&self, body: &str) -> crate::scan::Checked {
        match self.verifier() {
            Some(v) => v.check(body),
            None => crate::scan::Checked::Believed,
        }
    }

    /// The signature check of this client's reads (`None` without signing keys).
    pub(crate) fn verifier(&self) -> Option<crate::scan::Verifier> {
        crate::scan::Verifier::new(&self.signing, self.require_signatures)
    }

    /// Parses, trusts and dedupes a listing as every read of this client does: with signing
    /// keys, a record without a valid signature is not believed.
    pub(crate) fn scan_listing(&self, listing: crate::store::Listing, trust: &Trust) -> Scan {
        let doubt = |body: &str| self.doubt(body);
        crate::scan::scan_checked(listing, trust, &doubt)
    }

    /// Spool records the store cannot take to this outbox, drained under `policy`.
    pub fn with_outbox(mut self, outbox: Outbox, policy: DrainPolicy) -> Client<T> {
        self.store = self.store.with_outbox(outbox, policy);
        self
    }

    /// Reports the progress of long work (a flush now; sync, prune and rotate through the same
    /// hook) to `progress`. See [`crate::progress`].
    pub fn with_progress(mut self, progress: ProgressHook) -> Client<T> {
        self.store = self.store.with_progress(progress);
        self
    }

    /// Where long work reports its progress.
    pub fn progress(&self) -> &ProgressHook {
        self.store.progress()
    }

    /// Gives back the store.
    pub fn into_thread(self) -> T {
        self.store.into_thread()
    }

    /// The store under the durability layer. **Raw**: a body appended here bypasses redaction,
    /// rendering checks, the outbox and trust; use [`Client::save`] for records.
    pub fn thread_raw(&self) -> &T {
        self.store.thread()
    }

    /// Starts a new command: a forge gets a fresh wait budget ([`ForgeBuilder::wait`]).
    /// [`crate::verbs::call`] does this for each call; a program calling the client's methods
    /// directly calls it before each unit of work that should have its own budget.
    pub fn begin_command(&self) {
        self.store.thread().begin_command();
    }

    /// The wait rule (docs/failure-handling.md): this command has an answer without the store
    /// (`None`: it ends within the wait budget) or has none (`Some(why)`: it may wait up to the
    /// patience, and says why). The first word of a command holds.
    pub(crate) fn without_answer(&self, why: Option<&'static str>) {
        self.store.thread().without_answer(why);
    }

    /// A save's word for the wait rule: with an outbox it has an answer (it spools).
    pub(crate) fn saving(&self) {
        self.without_answer(
            self.store
                .outbox()
                .is_none()
                .then_some("there is no outbox to keep the record in"),
        );
    }

    /// The durability layer: outbox, drain, flush. **Raw**: a body saved here bypasses
    /// redaction and the record checks; use [`Client::save`] for records.
    pub fn durable_raw(&self) -> &Durable<T> {
        &self.store
    }

    /// The resume map records are resumed by.
    pub fn resume_map(&self) -> &ResumeMap {
        &self.resume
    }

    /// The renderer records are written with.
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// The outbox, when there is one.
    pub fn outbox(&self) -> Option<&Outbox> {
        self.store.outbox()
    }

    /// Redacts secrets (see [`Redactor::redact_record`]), noting the count in the record.
    /// Refuses a record whose agent, session, phase, status or next check looks like a secret:
    /// header values are never scrubbed, or a reader looking for the name would not find it.
    pub fn prepare(&self, mut record: Record) -> Result<Record> {
        self.redactor
            .redact_record(&mut record)
            .map_err(|e| Error::Build(e.into()))?;
        Ok(record)
    }

    /// Renders and posts one record now, with no outbox: the strict path. Nothing is posted
    /// unless the body reads back as the record. See [`Client::save`] for the durable path.
    pub async fn post(&self, record: Record) -> Result<Posted> {
        let record = self.prepare(record)?;
        let body = self.seal(self.renderer.render(&record)?);
        let comment = self.store.thread().append(&body).await?;
        Ok(self.posted(record, comment))
    }

    /// Posts a record, or spools it when the store cannot take it. Never panics, never loses a
    /// record that reached the outbox, never posts one twice.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use forgestate::{Client, Outcome, format::Record};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let client = Client::local_as(dir.path(), "me")?;
    /// let record = Record::checkpoint("w", "s1", "clone_complete", serde_json::json!({"api_key": "k"}))?;
    /// let Outcome::Posted(posted) = client.save(record).await else { panic!("not posted") };
    /// assert_eq!(posted.record.data()["api_key"], "[REDACTED]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn save(&self, record: Record) -> Outcome {
        self.save_as_written(self.as_this_writer(record)).await
    }

    /// `record` with the `Parent:` this client knows and this client's writer, where it names
    /// neither itself (what [`Client::save`] posts).
    pub(crate) fn as_this_writer(&self, mut record: Record) -> Record {
        if record.parent.is_none() {
            record.parent = self.known.get(&record.agent, &record.session);
        }
        if record.writer.is_none() {
            record.writer = Some(self.writer().to_string());
        }
        record
    }

    /// [`Client::save`] without naming a parent the record does not name: an import posts each
    /// record's lineage as it was written (inferring one invents a second writer).
    pub(crate) async fn save_as_written(&self, record: Record) -> Outcome {
        // Boxed: the future of a save stays small (a large one overflows the stack of a debug
        // build's thread, where it is moved and polled through many frames).
        match Box::pin(self.save_written(record, None)).await {
            Some(outcome) => outcome,
            // Only a guard refuses, and there is none.
            None => Outcome::Failed(Error::Conflict {
                message: "not posted: the store refused the append".to_string(),
            }),
        }
    }

    /// [`Client::save_as_written`], appending only when `guard` accepts the comments after the
    /// comment id it names, where the store can check and append as one ([`Durable::save_guarded`]);
    /// `None` when the guard refused and nothing was saved.
    pub(crate) async fn save_written(
        &self,
        record: Record,
        guard: Option<(u64, crate::store::AppendGuard)>,
    ) -> Option<Outcome> {
        self.saving();
        let record = match self.prepare(record) {
            Ok(r) => r,
            Err(e) => return Some(Outcome::Failed(e)),
        };
        let body = match self.renderer.render(&record) {
            Ok(b) => self.seal(b),
            Err(e) => return Some(Outcome::Failed(e.into())),
        };
        let saved = match guard {
            None => self.store.save(&body).await,
            // Boxed: a plain save's future stays the size it was (deep awaits overflow the
            // stack of a debug build's thread otherwise).
            Some((after, guard)) => {
                match Box::pin(self.store.save_guarded(&body, after, guard)).await {
                    Ok(None) => return None,
                    Ok(Some(saved)) => Ok(saved),
                    Err(e) => Err(e),
                }
            }
        };
        if saved.is_ok() {
            self.remember(&record);
        }
        match saved {
            Ok(Saved::Posted(c)) => {
                let mut posted = self.posted(record, c);
                match self.rotate_if_due_any().await {
                    Ok(rotation) => posted.rotation = rotation,
                    Err(e) => posted.rotation_failed = Some(e.to_string()),
                }
                if let Err(e) = self.auto_dashboard_any().await {
                    posted.dashboard_failed = Some(e.to_string());
                }
                Some(Outcome::Posted(posted))
            }
            Ok(Saved::Spooled { path, cause }) => Some(Outcome::Spooled {
                record,
                path,
                cause,
            }),
            Err(e) => Some(Outcome::Failed(e)),
        }
    }

    /// After a posted save: the automatic rotation, when the store is one that rotates (a
    /// forge session issue, through [`Client::rotate_if_due`]) and it is due. The record is
    /// already safe, so a failed rotation is reported, never the save's failure.
    async fn rotate_if_due_any(&self) -> Result<Option<Rotation>> {
        match self.as_any_thread() {
            Some(client) => client.rotate_if_due().await,
            None => Ok(None),
        }
    }

    /// After a posted save: the automatic refresh of the status table, when `[dashboard] auto`
    /// is on, the store is a forge and this machine last refreshed it long enough ago.
    async fn auto_dashboard_any(&self) -> Result<()> {
        if !self.dashboard.auto {
            return Ok(());
        }
        match self.as_any_thread() {
            Some(client) => client.auto_publish().await,
            None => Ok(()),
        }
    }

    /// This client, when its store is the run-time choice of store (what rotates and publishes).
    fn as_any_thread(&self) -> Option<&Client<crate::backend::AnyThread>> {
        (self as &dyn std::any::Any).downcast_ref()
    }

    /// Posts everything the outbox holds, with the full retry budget.
    pub async fn flush(&self) -> FlushReport {
        self.store.flush().await
    }

    fn posted(&self, record: Record, comment: Comment) -> Posted {
        tracing::info!(comment = comment.id, record = ?record.id, "posted {}", record.kind().name());
        Posted {
            id: record.id.clone(),
            comment_id: comment.id,
            url: comment.url,
            store: self.store.thread().describe(),
            record,
            rotation: None,
            rotation_failed: None,
            dashboard_failed: None,
        }
    }

    /// Who counts as an author of records.
    pub async fn trust(&self) -> Result<Trust> {
        if self.store.thread().trusts_everyone() {
            return Ok(Trust::Everyone);
        }
        let mut set = self.trusted_authors.clone();
        let login = match self.mirror.as_ref().and_then(|m| m.login()) {
            Some(login) => login,
            None => self.store.thread().whoami().await?,
        };
        set.insert(login);
        Ok(Trust::Only(set))
    }

    /// What a read may skip as it streams past: comments no trusted author wrote, and bodies the
    /// parser would refuse anyway. The scan decides the same with or without the skipping.
    fn keep(&self) -> Keep {
        let thread = self.store.thread();
        Keep {
            digest: None,
            authors: (!thread.trusts_everyone()).then(|| self.trusted_authors.clone()),
            max_body: crate::format::HARD_MAX_BODY_BYTES,
            identity: None,
            count: false,
        }
    }

    /// Reads and classifies the whole thread, plus this machine's pending records. When the
    /// store cannot be reached and there is an outbox, answers from the outbox alone, marked
    /// `offline`.
    pub async fn scan(&self) -> Result<Scan> {
        let (scan, _) = self.scan_unscrubbed(crate::mirror::Keep::All).await?;
        Ok(self.scrubbed(scan))
    }

    /// Records matching `filter`, oldest first; with `limit`, only the newest `limit` of them.
    /// Rejected comments and warnings are passed through unfiltered.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use forgestate::{Client, format::{Kind, Record}, scan::Filter};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let client = Client::local_as(dir.path(), "me")?;
    /// for phase in ["clone_complete", "subtasks_complete"] {
    ///     client.save(Record::checkpoint("w", "s1", phase, serde_json::json!({}))?).await.posted()?;
    /// }
    /// client.save(Record::health("w", "s1", "Active", serde_json::json!({}), None)?).await.posted()?;
    ///
    /// let checkpoints = Filter { kind: Some(Kind::Checkpoint), ..Filter::default() };
    /// let newest = client.list(&checkpoints, Some(1)).await?;
    /// assert_eq!(newest.entries.len(), 1);
    /// assert_eq!(newest.entries[0].record.phase(), Some("subtasks_complete"));
    /// assert_eq!(client.list(&Filter::default(), None).await?.entries.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn list(&self, filter: &Filter, limit: Option<usize>) -> Result<Scan> {
        // The filter reads the names as written; only what is answered is scrubbed.
        let (all, trust) = self.scan_unscrubbed(crate::mirror::Keep::All).await?;
        let found = self
            .list_from(all, trust.as_ref(), filter, limit, false)
            .await?;
        Ok(self.scrubbed(found))
    }

    /// [`Client::query`] over a scan already read, not scrubbed yet (the caller scrubs what it
    /// answers).
    /// Warns of comments newer than its newest record that could not be read, as `latest` does.
    async fn list_from(
        &self,
        all: Scan,
        trust: Option<&crate::scan::Trust>,
        filter: &Filter,
        limit: Option<usize>,
        history: bool,
    ) -> Result<Scan> {
        let mut all = match history {
            true => self.with_history(all).await?,
            false => self.follow_links(all, |e| filter.matches(e)).await?,
        };
        all.entries.retain(|e| filter.matches(e));
        if all.offline && all.entries.is_empty() {
            return Err(offline_unknown("records matching this filter"));
        }
        let stale = reads::stale_warnings(&all, trust, all.entries.last(), |kind, agent| {
            filter.wants(kind, agent)
        });
        all.warnings.extend(stale);
        if let Some(limit) = limit {
            let skip = all.entries.len().saturating_sub(limit);
            all.entries.drain(..skip);
        }
        let edited: Vec<String> = all.entries.iter().filter_map(edited_warning).collect();
        all.warnings.extend(edited);
        Ok(all)
    }
}

pub(super) fn offline_unknown(what: &str) -> Error {
    Error::unavailable(format!(
        "the forge cannot be read and this machine knows nothing about {what}; try again when \
         the forge is reachable (not answering a fresh start for a thread that could not be read)"
    ))
}
