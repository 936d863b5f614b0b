//! Watch: follow a thread live, yielding each new record once, and saying once when the store
//! stops answering and once when it answers again.
//!
//! Polling uses [`Thread::list_with`] with `since` (in one place, `Watcher::fetch`, so a read
//! cache can take over later). `since` is inclusive, in whole seconds, on `updated_at` and the
//! server's clock: every comment of the last second is listed again, so comments are deduped
//! by id (and records by their `Id`). `since` is the newest `updated_at` seen, which is the
//! server's own clock, never this machine's. The interval adapts ([`Pacer`]): the base while
//! records arrive, doubling up to a ceiling while the thread is idle or the store is down.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::client::Client;
use crate::defaults::{WATCH_INTERVAL_SECS, WATCH_MAX_INTERVAL_SECS};
use crate::error::Result;
use crate::scan::{Entry, Filter};
use crate::store::{Effort, Listing, Thread};

/// What to watch and how often.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchOptions {
    /// Which records to yield.
    pub filter: Filter,
    /// The pause between polls while records arrive.
    pub interval: Duration,
    /// The longest pause while idle; never below `interval`.
    pub max_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            filter: Filter::default(),
            interval: Duration::from_secs(WATCH_INTERVAL_SECS),
            max_interval: Duration::from_secs(WATCH_MAX_INTERVAL_SECS),
        }
    }
}

/// Something a watcher noticed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The thread was read once; records posted from now on are yielded.
    Watching {
        /// The thread, as [`Thread::describe`] puts it.
        thread: String,
        /// How many matching records it already held (not yielded).
        existing: usize,
    },
    /// A new record.
    Record(Box<Entry>),
    /// The store stopped answering (said once per outage).
    Outage {
        /// When the first poll failed (this machine's clock).
        since: DateTime<Utc>,
        /// Why.
        reason: String,
    },
    /// The store answers again.
    Recovered {
        /// When the outage began.
        since: DateTime<Utc>,
        /// How long it lasted, in whole seconds.
        lasted_secs: i64,
    },
}

/// The adaptive poll interval: `base` after activity, doubling to `max` while idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacer {
    base: Duration,
    max: Duration,
    current: Duration,
}

impl Pacer {
    /// Starts at `base`; `max` is raised to `base` if lower.
    pub fn new(base: Duration, max: Duration) -> Pacer {
        let base = base.max(Duration::from_millis(1));
        Pacer {
            base,
            max: max.max(base),
            current: base,
        }
    }

    /// The pause before the next poll.
    pub fn wait(&self) -> Duration {
        self.current
    }

    /// A poll found something: back to the base interval.
    pub fn active(&mut self) {
        self.current = self.base;
    }

    /// A poll found nothing (or failed): wait twice as long next time, up to the ceiling.
    pub fn idle(&mut self) {
        self.current = (self.current * 2).min(self.max);
    }
}

/// Follows one thread. [`Watcher::poll`] is one step; [`run`] is the whole loop.
pub struct Watcher<'a, T> {
    client: &'a Client<T>,
    filter: Filter,
    /// The newest `updated_at` seen: the next poll's inclusive `since`.
    since: Option<DateTime<Utc>>,
    /// Comment ids seen at or after `since` (older ones cannot be listed again).
    seen: HashMap<u64, DateTime<Utc>>,
    /// Record ids yielded or already present, against a record posted twice.
    records: HashSet<String>,
    outage: Option<DateTime<Utc>>,
    pacer: Pacer,
}

impl<'a, T: Thread> Watcher<'a, T> {
    /// A watcher over `client`'s thread; nothing is read until [`Watcher::start`].
    pub fn new(client: &'a Client<T>, options: &WatchOptions) -> Watcher<'a, T> {
        Watcher {
            client,
            filter: options.filter.clone(),
            since: None,
            seen: HashMap::new(),
            records: HashSet::new(),
            outage: None,
            pacer: Pacer::new(options.interval, options.max_interval),
        }
    }

    /// Reads the thread as it stands (nothing is yielded for it). Fails when it cannot be read;
    /// [`run`] retries a failure that waiting may fix, as an outage.
    pub async fn start(&mut self) -> Result<Event> {
        let existing = self.read().await?.len();
        Ok(Event::Watching {
            thread: self.client.thread_raw().describe(),
            existing,
        })
    }

    /// The pause before the next poll.
    pub fn wait(&self) -> Duration {
        self.pacer.wait()
    }

    /// One poll: the new records, or the start or end of an outage. Errors that waiting cannot
    /// fix (a revoked token, a deleted repository) end the watch.
    pub async fn poll(&mut self) -> Result<Vec<Event>> {
        let mut events = Vec::new();
        match self.read().await {
            Ok(fresh) => {
                events.extend(self.recovered());
                if fresh.is_empty() {
                    self.pacer.idle();
                } else {
                    self.pacer.active();
                }
                events.extend(fresh.into_iter().map(|e| Event::Record(Box::new(e))));
            }
            Err(e) => events.extend(self.failed(e)?),
        }
        Ok(events)
    }

    /// A read failed: an [`Event::Outage`] the first time in a row, nothing after that, and
    /// the error itself when waiting cannot fix it.
    fn failed(&mut self, e: crate::error::Error) -> Result<Option<Event>> {
        if !e.retry_may_fix() {
            return Err(e);
        }
        self.pacer.idle();
        if self.outage.is_some() {
            return Ok(None);
        }
        let since = Utc::now();
        self.outage = Some(since);
        Ok(Some(Event::Outage {
            since,
            reason: e.to_string(),
        }))
    }

    /// A read succeeded: an [`Event::Recovered`] when it ends an outage.
    fn recovered(&mut self) -> Option<Event> {
        let since = self.outage.take()?;
        let lasted_secs = (Utc::now() - since).num_seconds().max(0);
        Some(Event::Recovered { since, lasted_secs })
    }

    /// The comments listed since the last poll, one attempt (the next poll is the retry).
    /// The one place a read cache replaces.
    async fn fetch(&self) -> Result<Listing> {
        // Each poll is a command of its own: its own wait budget, whatever the last one met.
        self.client.begin_command();
        Ok(self
            .client
            .thread_raw()
            .list_with(self.since, Effort::Once)
            .await?)
    }

    /// Lists, keeps what was not seen, and moves `since` on. Returns the new matching records.
    async fn read(&mut self) -> Result<Vec<Entry>> {
        let listing = self.fetch().await?;
        let newest = listing.comments.iter().map(|c| c.updated_at).max();
        let unseen: Vec<_> = listing
            .comments
            .into_iter()
            .filter(|c| !self.seen.contains_key(&c.id))
            .collect();
        for c in &unseen {
            self.seen.insert(c.id, c.updated_at);
        }
        if let Some(newest) = newest {
            let since = self.since.map_or(newest, |s| s.max(newest));
            self.since = Some(since);
            // Ids updated before `since`'s second are never listed again.
            self.seen.retain(|_, t| t.timestamp() >= since.timestamp());
        }
        let trust = self.client.trust().await?;
        let listing = Listing {
            comments: unseen,
            ..Listing::default()
        };
        let mut fresh = Vec::new();
        let scan = self
            .client
            .scrubbed(self.client.scan_listing(listing, &trust));
        for e in scan.entries {
            let repeat = e
                .record
                .id
                .as_ref()
                .is_some_and(|id| !self.records.insert(id.clone()));
            if !repeat && self.filter.matches(&e) {
                fresh.push(e);
            }
        }
        Ok(fresh)
    }
}

/// Watches until `stop` completes: reads the thread, then polls at the adaptive interval,
/// handing every event to `on_event`. Returns `Ok` when stopped, or the failure waiting cannot
/// fix that ended it (a refused token, a missing repository).
pub async fn run<T: Thread>(
    client: &Client<T>,
    options: &WatchOptions,
    stop: impl Future<Output = ()>,
    mut on_event: impl FnMut(&Event),
) -> Result<()> {
    let mut watcher = Watcher::new(client, options);
    tokio::pin!(stop);
    // The first read, retried as an outage while the store is down (a watch may well be started
    // during one); a failure waiting cannot fix ends it.
    loop {
        let started = tokio::select! {
            () = &mut stop => return Ok(()),
            started = watcher.start() => started,
        };
        match started {
            Ok(event) => {
                watcher.recovered().iter().for_each(&mut on_event);
                on_event(&event);
                break;
            }
            Err(e) => {
                watcher.failed(e)?.iter().for_each(&mut on_event);
                let wait = watcher.wait();
                tokio::select! {
                    () = &mut stop => return Ok(()),
                    () = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
    loop {
        let wait = watcher.wait();
        let events = tokio::select! {
            () = &mut stop => return Ok(()),
            events = async {
                tokio::time::sleep(wait).await;
                watcher.poll().await
            } => events?,
        };
        events.iter().for_each(&mut on_event);
    }
}
