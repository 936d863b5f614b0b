//! A stateful fake Forgejo for the test suite, faithful to `ENDPOINTS.md` §7 (and no kinder than
//! the real server): paginated issue lists with the exact `Link` format and `X-Total-Count`,
//! clamped limits, ALL-label semantics where an unknown label disables the filter, an
//! unpaginated comment list filtered inclusively on `updated_at` in whole seconds, 201 for issue
//! edits, 200 with the full list for added labels, 204 for deletions, empty 403 bodies, `null`
//! for unset fields and the non-privileged user view for comment posters.
//!
//! Built on wiremock: one catch-all mock whose responder routes by method and path over shared
//! state. wiremock records every request, which the tests count.

pub mod dropper;
mod lists;
pub mod outage;
pub mod outbox;
mod people;
mod routes;
mod setup;
pub mod views;
mod writes;

#[allow(unused_imports)] // not every test binary sets the fake up through these
pub use setup::*;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const OWNER: &str = "cleveragents";
pub const REPO: &str = "cleveragents-core";
pub const BOT_TOKEN: &str = "0123456789abcdef0123456789abcdef01234567";
pub const MALLORY_TOKEN: &str = "fedcba9876543210fedcba9876543210fedcba98";
pub const READER_TOKEN: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
/// `ca-ops`: a writer whose token also has `read:repository` (it may read the repository's
/// metadata and permissions).
pub const OPS_TOKEN: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: i64,
    pub login: String,
    pub token: String,
    pub scopes: Vec<&'static str>,
    /// Write access to the repository's issues.
    pub writer: bool,
}

#[derive(Debug, Clone)]
pub struct LabelRow {
    pub id: i64,
    pub name: String,
    pub color: String,
    pub description: String,
}

#[derive(Debug, Clone)]
pub struct IssueRow {
    pub id: i64,
    pub number: u64,
    pub title: String,
    pub body: String,
    pub poster: i64,
    pub labels: Vec<i64>,
    pub closed: bool,
    pub is_pull: bool,
    pub created: i64,
    pub updated: i64,
    pub closed_at: Option<i64>,
    pub comments: i64,
}

#[derive(Debug, Clone)]
pub struct CommentRow {
    pub id: u64,
    pub issue: u64,
    pub poster: i64,
    pub body: String,
    pub created: i64,
    pub updated: i64,
}

/// A scripted misbehaviour for the next matching request.
pub enum Fault {
    /// Answer with this status and an `APIError` body, without touching state.
    Status(u16),
    /// The same, with a `Retry-After` header of this many seconds.
    StatusRetryAfter(u16, u64),
    /// Do the work, then answer only after this delay (past the client's timeout).
    CommitThenDelay(Duration),
    /// Do the work, then answer 500 (counted as a `fail_rate` failure on a committed post).
    CommitThenFail,
    /// Do the work twice, as if a concurrent client had sent the same request just before this
    /// one (a racing label or issue create); answer the second.
    Twice,
    /// Answer normally (lets the first of several matching requests through before a fault).
    Pass,
}

/// Everything the fake server knows.
pub struct State {
    pub root: String,
    pub users: Vec<UserRow>,
    pub labels: Vec<LabelRow>,
    pub issues: Vec<IssueRow>,
    pub comments: Vec<CommentRow>,
    /// Keys replacing those of a comment's JSON view (a `null` body, an odd `user`), by id: for
    /// testing readers against shapes a live server never sends.
    pub comment_overlays: Vec<(u64, serde_json::Value)>,
    pub next_issue_id: i64,
    pub next_comment_id: u64,
    pub next_label_id: i64,
    pub last_number: u64,
    pub max_response_items: u32,
    pub default_paging_num: u32,
    pub version: String,
    /// Seconds added to the real clock, to simulate time passing or a server clock that drifted
    /// (it shows in the `Date` header and in every timestamp).
    pub clock_offset: i64,
    /// Seconds added to the `Date` header only: a proxy in front of the forge whose clock is off,
    /// so `Date` disagrees with the times the forge stamps on comments and issues.
    pub date_offset: i64,
    /// Faults for POSTs to a path ending like this, consumed in order.
    pub faults: VecDeque<(String, Fault)>,
    /// The forge is down: every request gets a 503 and nothing changes.
    pub down: bool,
    /// An outage or a slow forge (`outage.rs`): `Unavailable` is `down`; refusing, silent,
    /// dribbling and alternating need a `Front`.
    pub mode: outage::Mode,
    /// Requests an alternating `Front` has seen (every other one fails).
    pub alternated: u64,
    /// This fraction of requests fails with a 5xx; half of the failing comment posts are
    /// committed first (the ambiguous case).
    pub fail_rate: f64,
    /// How many failures `fail_rate` and injected faults caused, and how many of them were
    /// committed posts.
    pub failed: u32,
    pub committed_then_failed: u32,
    /// Every answer comes this much later (after the work is done): a slow forge.
    pub latency: Duration,
    /// Answers to requests whose path (without the query) ends like this come this much later
    /// again: one slow endpoint, such as `/user`.
    pub path_delays: Vec<(String, Duration)>,
    /// Every request as it reached the fake, with when its answer was let go (after the
    /// delays above): for tests of which requests a client asks together.
    pub arrivals: Vec<Arrival>,
    /// Comment bodies are stored with CRLF line ends (as a web form or a proxy can leave them).
    pub crlf: bool,
    /// The repository's id (`repository.id` in issue views, `id` of `GET /repos/{o}/{r}`):
    /// [`FakeForge::recreate`] gives it a new one.
    pub repo_id: i64,
    rng: u64,
}

impl State {
    pub fn now(&self) -> i64 {
        Utc::now().timestamp() + self.clock_offset
    }

    /// A deterministic pseudo-random number in [0, 1).
    pub fn roll(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn user(&self, id: i64) -> Option<&UserRow> {
        self.users.iter().find(|u| u.id == id)
    }

    pub fn issue_mut(&mut self, number: u64) -> Option<&mut IssueRow> {
        self.issues.iter_mut().find(|i| i.number == number)
    }

    /// Issue numbers are per-repository and never reused, even after a deletion.
    pub fn next_number(&mut self) -> u64 {
        self.last_number += 1;
        self.last_number
    }
}

/// One request as it reached the fake.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// When the fake got it.
    pub at: Instant,
    /// When its answer was let go: no client can have read it earlier.
    pub answered: Instant,
}

/// The running fake and the handle tests use to arrange and inspect it.
pub struct FakeForge {
    pub server: MockServer,
    state: Arc<Mutex<State>>,
}

struct Responder(Arc<Mutex<State>>);

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // Go's server stamps every answer with its own clock (hyper would use the real one).
        let date = std::time::UNIX_EPOCH
            + Duration::from_secs((state.now() + state.date_offset).max(0) as u64);
        let answer = routes::handle(&mut state, request)
            .insert_header("Date", httpdate::fmt_http_date(date).as_str());
        let extra: Duration = state
            .path_delays
            .iter()
            .filter(|(suffix, _)| request.url.path().ends_with(suffix.as_str()))
            .map(|(_, d)| *d)
            .sum();
        let late = match state.mode {
            outage::Mode::SlowList(late)
                if request.method.as_str() == "GET"
                    && request.url.path().ends_with("/comments") =>
            {
                late
            }
            _ => Duration::ZERO,
        };
        let delay = state.latency + extra + late;
        let at = Instant::now();
        state.arrivals.push(Arrival {
            method: request.method.to_string(),
            path: request.url.path().to_string(),
            at,
            answered: at + delay,
        });
        if delay.is_zero() {
            answer
        } else {
            answer.set_delay(delay)
        }
    }
}

impl FakeForge {
    /// A Forgejo with the bot (`ca-bot`, issue and user scopes, writer), `mallory` (can
    /// comment, not a writer), `reader` (read-only scopes) and `ca-ops` (the bot's scopes plus
    /// `read:repository`).
    pub async fn start() -> FakeForge {
        let server = MockServer::start().await;
        let state = State {
            root: format!("{}/", server.uri()),
            users: vec![
                UserRow {
                    id: 7,
                    login: "ca-bot".into(),
                    token: BOT_TOKEN.into(),
                    scopes: vec!["write:issue", "read:user"],
                    writer: true,
                },
                UserRow {
                    id: 9,
                    login: "mallory".into(),
                    token: MALLORY_TOKEN.into(),
                    scopes: vec!["write:issue", "read:user"],
                    writer: false,
                },
                UserRow {
                    id: 11,
                    login: "reader".into(),
                    token: READER_TOKEN.into(),
                    scopes: vec!["read:issue"],
                    writer: false,
                },
                UserRow {
                    id: 13,
                    login: "ca-ops".into(),
                    token: OPS_TOKEN.into(),
                    scopes: vec!["write:issue", "read:user", "read:repository"],
                    writer: true,
                },
            ],
            labels: Vec::new(),
            issues: Vec::new(),
            comments: Vec::new(),
            comment_overlays: Vec::new(),
            next_issue_id: 400,
            next_comment_id: 1200,
            next_label_id: 10,
            last_number: 0,
            max_response_items: 50,
            default_paging_num: 30,
            version: "15.0.3+gitea-1.22.0".into(),
            clock_offset: 0,
            faults: VecDeque::new(),
            down: false,
            mode: outage::Mode::Up,
            alternated: 0,
            fail_rate: 0.0,
            failed: 0,
            committed_then_failed: 0,
            latency: Duration::ZERO,
            date_offset: 0,
            path_delays: Vec::new(),
            arrivals: Vec::new(),
            crlf: false,
            repo_id: 42,
            rng: 0x2545_f491_4f6c_dd1d,
        };
        let state = Arc::new(Mutex::new(state));
        Mock::given(any())
            .respond_with(Responder(state.clone()))
            .mount(&server)
            .await;
        FakeForge { server, state }
    }

    /// The forge recreated at the same URL (a wiped instance set up again): the same users, a
    /// repository of the same name with a new id, and no labels, issues or comments; issue
    /// numbers and ids start over.
    pub fn recreate(&self) {
        let mut s = self.state();
        s.repo_id += 1;
        s.labels.clear();
        s.issues.clear();
        s.comments.clear();
        s.comment_overlays.clear();
        s.next_issue_id = 400;
        s.next_comment_id = 1200;
        s.next_label_id = 10;
        s.last_number = 0;
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        *self.server.address()
    }

    pub fn uri(&self) -> String {
        self.server.uri()
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn add_label(&self, name: &str) -> i64 {
        let mut s = self.state();
        let id = s.next_label_id;
        s.next_label_id += 1;
        s.labels.push(LabelRow {
            id,
            name: name.into(),
            color: "1d76db".into(),
            description: String::new(),
        });
        id
    }

    /// Adds an issue posted by the bot; returns its number.
    pub fn add_issue(&self, title: &str, labels: &[i64], closed: bool) -> u64 {
        let mut s = self.state();
        let now = s.now();
        let (id, number) = (s.next_issue_id, s.next_number());
        s.next_issue_id += 1;
        s.issues.push(IssueRow {
            id,
            number,
            title: title.into(),
            body: String::new(),
            poster: 7,
            labels: labels.to_vec(),
            closed,
            is_pull: false,
            created: now,
            updated: now,
            closed_at: closed.then_some(now),
            comments: 0,
        });
        number
    }

    /// Adds a comment directly (as if posted through the web UI by `login`).
    pub fn add_comment(&self, issue: u64, login: &str, body: &str) -> u64 {
        let mut s = self.state();
        let poster = s
            .users
            .iter()
            .find(|u| u.login == login)
            .map(|u| u.id)
            .expect("known user");
        let now = s.now();
        let id = s.next_comment_id;
        s.next_comment_id += 7; // global ids: increasing, not contiguous per issue
        s.comments.push(CommentRow {
            id,
            issue,
            poster,
            body: body.into(),
            created: now,
            updated: now,
        });
        if let Some(row) = s.issue_mut(issue) {
            // As a post through the API or the web UI does (§3.11).
            row.comments += 1;
            row.updated = now;
        }
        id
    }

    /// Deletes a comment as a person in the web UI does (what `DELETE …/issues/comments/{id}`
    /// does, §3.12): gone from every list, and its issue's `comments` count drops with it
    /// (Forgejo's `DeleteComment` decrements it for a plain comment).
    pub fn delete_comment(&self, id: u64) {
        let mut s = self.state();
        let at = s
            .comments
            .iter()
            .position(|c| c.id == id)
            .expect("a comment");
        let gone = s.comments.remove(at);
        if let Some(row) = s.issue_mut(gone.issue) {
            row.comments -= 1;
        }
    }

    /// Adds a comment whose JSON view has `overlay`'s keys replaced (e.g. `{"body": null}`).
    pub fn add_odd_comment(
        &self,
        issue: u64,
        login: &str,
        body: &str,
        overlay: serde_json::Value,
    ) -> u64 {
        let id = self.add_comment(issue, login, body);
        self.state().comment_overlays.push((id, overlay));
        id
    }

    pub fn open_issues_titled(&self, title: &str) -> Vec<u64> {
        self.state()
            .issues
            .iter()
            .filter(|i| !i.closed && i.title == title)
            .map(|i| i.number)
            .collect()
    }

    pub fn comments_on(&self, issue: u64) -> Vec<CommentRow> {
        self.state()
            .comments
            .iter()
            .filter(|c| c.issue == issue)
            .cloned()
            .collect()
    }

    pub fn inject(&self, path_suffix: &str, fault: Fault) {
        self.state()
            .faults
            .push_back((path_suffix.to_string(), fault));
    }

    /// Every request received so far.
    pub async fn requests(&self) -> Vec<Request> {
        self.server.received_requests().await.unwrap_or_default()
    }
}

pub fn ts(unix: i64) -> String {
    DateTime::from_timestamp(unix, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
