//! Wire types of the Forgejo/Gitea API, as the server serializes them (`ENDPOINTS.md` §4).
//!
//! Every field the server may send as `null` is an `Option`, whatever swagger says (it omits
//! `x-nullable`). Unknown keys are ignored, so newer servers and Gitea's variants still decode.
//! Only fields forgestate reads, or that document the shape, are modelled; a comment and its
//! poster keep only what is read, since a long thread holds tens of thousands of them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A per-repository issue number (`{index}` in paths), not the global issue id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct IssueNumber(pub u64);

impl std::fmt::Display for IssueNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A global comment id: unique across the instance and increasing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CommentId(pub u64);

/// A label id (repository or organisation label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LabelId(pub i64);

/// A user. Comment posters come in the non-privileged view; `GET /user` in the self view. Only
/// what forgestate reads is kept (the display name, e-mail, profile page and the rest are not):
/// a cold read holds one of these per comment of the thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    /// `-1` for the Ghost user of a deleted account.
    pub id: i64,
    /// The user name.
    pub login: String,
    /// Note: `created`, not `created_at`.
    pub created: Option<DateTime<Utc>>,
}

/// A repository label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    /// The label's id.
    pub id: LabelId,
    /// The label's name (`Type/Automation`).
    pub name: String,
    /// Whether the label is exclusive within its scope.
    #[serde(default)]
    pub exclusive: bool,
    /// Whether the label is archived.
    #[serde(default)]
    pub is_archived: bool,
    /// Six lowercase hex digits, without `#`.
    pub color: String,
    /// The label's description.
    #[serde(default)]
    pub description: String,
    /// The label's API URL.
    #[serde(default)]
    pub url: String,
}

/// Whether an issue is open or closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    /// Open.
    Open,
    /// Closed.
    Closed,
}

/// The minimal repository object embedded in an issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepositoryMeta {
    /// The repository id.
    pub id: i64,
    /// The repository name.
    pub name: String,
    /// The owner's login.
    pub owner: String,
    /// `owner/name`.
    pub full_name: String,
}

/// An issue (the session issue and its predecessors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    /// The global issue id (not the number).
    pub id: i64,
    /// The API URL.
    pub url: String,
    /// The web page.
    pub html_url: String,
    /// The number within the repository.
    pub number: IssueNumber,
    /// Who opened it.
    pub user: User,
    /// The title.
    pub title: String,
    /// The body (markdown).
    #[serde(default)]
    pub body: String,
    /// `[]` when none.
    #[serde(default)]
    pub labels: Vec<Label>,
    /// The milestone, unread.
    pub milestone: Option<Value>,
    /// The first assignee.
    pub assignee: Option<User>,
    /// `null` (not `[]`) when nobody is assigned.
    pub assignees: Option<Vec<User>>,
    /// Open or closed.
    pub state: IssueState,
    /// Whether comments are locked.
    #[serde(default)]
    pub is_locked: bool,
    /// How many comments it has.
    #[serde(default)]
    pub comments: i64,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// When it was closed.
    pub closed_at: Option<DateTime<Utc>>,
    /// The due date.
    pub due_date: Option<DateTime<Utc>>,
    /// Pull request details; `None` for a plain issue.
    pub pull_request: Option<Value>,
    /// The repository it belongs to.
    pub repository: Option<RepositoryMeta>,
}

impl Issue {
    /// Whether it carries a label of exactly this name.
    pub fn has_label(&self, name: &str) -> bool {
        self.labels.iter().any(|l| l.name == name)
    }
}

/// A comment. The fields forgestate reads must have their documented shape; `issue_url` falls
/// back to empty when the server sends `null` or something odd, so it can never make a comment
/// unreadable. The fields forgestate does not read (`pull_request_url`, `original_author`,
/// `assets`, ...) are not kept: a cold read holds one of these per comment of the thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comment {
    /// The global comment id.
    pub id: CommentId,
    /// The comment's web link (`…#issuecomment-N`).
    pub html_url: String,
    /// The **HTML** URL of the issue, not an API URL.
    #[serde(default, deserialize_with = "lenient")]
    pub issue_url: String,
    /// The poster; `None` never happens on a live server. Readers treat such a comment as
    /// unreadable: nobody can say who wrote it.
    pub user: Option<User>,
    /// The comment body (markdown).
    pub body: String,
    /// When it was posted.
    pub created_at: DateTime<Utc>,
    /// When it last changed (later than `created_at` after an edit).
    pub updated_at: DateTime<Utc>,
}

/// A field forgestate does not read: its value when it has the expected shape, else the default.
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// An element of a comment list that is not a readable comment, with whatever could be read of
/// it and why the rest could not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableComment {
    /// The comment id, when it could be read.
    pub id: Option<CommentId>,
    /// The poster's login, when it could be read.
    pub login: Option<String>,
    /// When it was posted, when that could be read.
    pub created_at: Option<DateTime<Utc>>,
    /// When it last changed, when that could be read.
    pub updated_at: Option<DateTime<Utc>>,
    /// The web link, when it could be read.
    pub html_url: Option<String>,
    /// What is wrong with it, naming the field: "`body` is null, expected a string".
    pub reason: String,
    /// Set when the listing skipped it on purpose (see the crate's `Keep`).
    pub skipped: Option<crate::store::Skip>,
    /// The beginning of a body skipped as too large (`store::Unreadable::head`).
    pub head: Option<String>,
}

/// A comment list decoded element by element: one odd element is one unreadable comment, not
/// an unreadable thread.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommentList {
    /// The readable comments, in the server's order.
    pub comments: Vec<Comment>,
    /// The elements that could not be read.
    pub unreadable: Vec<UnreadableComment>,
    /// How many elements the array held, whatever became of them (kept, unreadable, or dropped
    /// unread): what the answer's `X-Total-Count` is checked against.
    pub seen: usize,
    /// The answer's `X-Total-Count`, when it sent one: the server's own word that the list is
    /// whole (a proxy may strip it).
    pub total: Option<u64>,
    /// Issues whose comments were left out, their bodies unread, because the comments of issues
    /// not known to be members passed the body cap (`Filter::members`, `forge/decode.rs`):
    /// those that are members are read again on their own.
    pub deferred: std::collections::BTreeSet<u64>,
    /// Why the list may lack comments of the session thread (read through the head's own list
    /// in place of the repository-wide one), when it may.
    pub partial: Option<String>,
    /// The comments the reader's digest took whole as they were decoded (`forge/handoff.rs`),
    /// in the server's order: what the list still needs of each to place it. Only a read with a
    /// digest (the crate's own read cache) has any.
    pub(crate) taken: Vec<Taken>,
}

/// A comment the reader's digest took whole as it was decoded: its id, its issue when its
/// address names one, and when it last changed (a listing's next cursor is the newest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taken {
    pub id: CommentId,
    pub issue: Option<u64>,
    pub updated_at: DateTime<Utc>,
}

impl CommentList {
    /// Decodes each element of a JSON array on its own. Comments without a poster (`user` is
    /// `null`) count as unreadable too: nobody can say who wrote them.
    pub fn decode(items: Vec<Value>) -> CommentList {
        let mut out = CommentList {
            seen: items.len(),
            ..CommentList::default()
        };
        for item in items {
            match Comment::classify(&item) {
                Ok(c) => out.comments.push(c),
                Err(odd) => out.unreadable.push(*odd),
            }
        }
        out
    }
}

impl Comment {
    /// One element of a comment list: a readable comment with a poster, or what could be read
    /// of it and why not the rest.
    pub(crate) fn classify(item: &Value) -> Result<Comment, Box<UnreadableComment>> {
        // What can be read of an odd one is salvaged only then: most comments are not.
        let odd = |reason: String| {
            let mut odd = UnreadableComment::salvage(item);
            odd.reason = reason;
            Box::new(odd)
        };
        match Comment::deserialize(item) {
            Ok(c) if c.user.is_some() => Ok(c),
            Ok(_) => Err(odd("`user` is null: the poster is unknown".to_string())),
            Err(e) => Err(odd(shape_error(item, &e))),
        }
    }
}

impl UnreadableComment {
    /// What can be read of an element, each field on its own.
    pub(crate) fn salvage(item: &Value) -> UnreadableComment {
        let time = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc))
        };
        UnreadableComment {
            id: item.get("id").and_then(Value::as_u64).map(CommentId),
            login: item
                .get("user")
                .and_then(|u| u.get("login"))
                .and_then(Value::as_str)
                .map(str::to_string),
            created_at: time("created_at"),
            updated_at: time("updated_at"),
            html_url: item
                .get("html_url")
                .and_then(Value::as_str)
                .map(str::to_string),
            reason: String::new(),
            skipped: None,
            head: None,
        }
    }
}

/// Why `item` is not a [`Comment`], naming the first field to blame when one is.
fn shape_error(item: &Value, e: &serde_json::Error) -> String {
    let Some(obj) = item.as_object() else {
        return format!("not a JSON object but {}", json_kind(item));
    };
    fn fits<T: serde::de::DeserializeOwned>(v: &Value) -> Result<(), serde_json::Error> {
        T::deserialize(v).map(|_| ())
    }
    type Check = fn(&Value) -> Result<(), serde_json::Error>;
    let checks: [(&str, &str, Check); 6] = [
        ("id", "a comment id", fits::<CommentId>),
        ("html_url", "a string", fits::<String>),
        ("user", "a user", fits::<Option<User>>),
        ("body", "a string", fits::<String>),
        ("created_at", "an RFC 3339 time", fits::<DateTime<Utc>>),
        ("updated_at", "an RFC 3339 time", fits::<DateTime<Utc>>),
    ];
    for (field, want, check) in checks {
        match obj.get(field) {
            None => return format!("`{field}` is missing"),
            Some(v) => {
                if let Err(err) = check(v) {
                    return match v {
                        Value::Object(_) => format!("`{field}` is not {want}: {err}"),
                        _ => format!("`{field}` is {}, expected {want}", json_kind(v)),
                    };
                }
            }
        }
    }
    e.to_string()
}

fn json_kind(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// `GET /repos/{o}/{r}` (the `repository` token scope): only what `doctor` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repository {
    /// `owner/name`.
    pub full_name: String,
    /// Whether the repository is archived (read-only: every write is refused).
    #[serde(default)]
    pub archived: bool,
    /// What the token's user may do there; `null` for an anonymous caller.
    pub permissions: Option<Permission>,
}

/// A user's access to a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permission {
    /// Administer it.
    #[serde(default)]
    pub admin: bool,
    /// Write to it (issue labels, editing others' comments).
    #[serde(default)]
    pub push: bool,
    /// Read it.
    #[serde(default)]
    pub pull: bool,
}

/// `GET /settings/api`. Newer Gitea adds keys; they are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiSettings {
    /// The most items one list page returns (the page size forgestate asks for).
    pub max_response_items: u32,
    /// The page size when none is asked for.
    pub default_paging_num: u32,
}

/// `GET /version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerVersion {
    /// `1.22.0`, or `11.0.0+gitea-1.22.0` on Forgejo.
    pub version: String,
}

impl ServerVersion {
    /// Forgejo reports `<version>+gitea-<compat>`; Gitea reports a plain version.
    pub fn is_forgejo(&self) -> bool {
        self.version.contains("+gitea-")
    }

    /// "Forgejo 15.0.3 (Gitea 1.22.0 compatible)" or "Gitea 1.23.0".
    pub fn describe(&self) -> String {
        match self.version.split_once("+gitea-") {
            Some((forgejo, gitea)) => format!("Forgejo {forgejo} (Gitea {gitea} compatible)"),
            None => format!("Gitea {}", self.version),
        }
    }
}

/// The body of an error answer. Several 403s and 204s have none at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// The server's message (may be empty).
    #[serde(default)]
    pub message: String,
    /// A link to the API documentation.
    pub url: Option<String>,
    /// Details, on validation errors.
    pub errors: Option<Vec<String>>,
}

/// `POST /repos/{o}/{r}/issues`.
#[derive(Debug, Clone, Serialize)]
pub struct CreateIssue<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub labels: Vec<LabelId>,
}

/// `POST /repos/{o}/{r}/labels`.
#[derive(Debug, Clone, Serialize)]
pub struct CreateLabel<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub description: &'a str,
}
