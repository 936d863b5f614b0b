//! Request routing and handlers of the fake Forgejo.
// Handlers return early with a finished reply; boxing it would only add noise to a test fake.
#![allow(clippy::result_large_err)]

use base64::Engine;
use serde_json::{Value, json};
use wiremock::{Request, ResponseTemplate};

use super::lists::{list_issues, list_labels, list_repo_comments};
use super::views::{self, empty, error, not_found, ok};
use super::writes::{create_issue, create_label, edit_comment};
use super::{CommentRow, Fault, State, UserRow};

pub type Reply = ResponseTemplate;

pub fn handle(s: &mut State, req: &Request) -> Reply {
    let method = req.method.as_str().to_string();
    let path = req.url.path().to_string();
    let Some(rest) = path.strip_prefix("/api/v1/") else {
        return not_found(s, "The target couldn't be found.", &[]);
    };
    let caller = match authenticate(s, req) {
        Ok(c) => c,
        Err(reply) => return reply,
    };
    if s.down || s.mode == super::outage::Mode::Unavailable {
        return error(s, 503, "");
    }
    let mut commit_then_fail = false;
    if s.fail_rate > 0.0 && s.roll() < s.fail_rate {
        let posting_comment = method == "POST" && path.ends_with("/comments");
        s.failed += 1;
        if posting_comment && s.roll() < 0.5 {
            commit_then_fail = true;
            s.committed_then_failed += 1;
        } else {
            return error(s, 502, "");
        }
    }
    let fault = if method != "GET" {
        take_fault(s, &path)
    } else {
        take_read_fault(s, &path)
    };
    if let Some(Fault::CommitThenFail) = fault {
        s.failed += 1;
        s.committed_then_failed += 1;
        commit_then_fail = true;
    }
    match fault {
        Some(Fault::Status(code)) => {
            s.failed += 1;
            return error(s, code, "injected failure");
        }
        Some(Fault::StatusRetryAfter(code, secs)) => {
            return error(s, code, "").insert_header("Retry-After", secs.to_string().as_str());
        }
        _ => {}
    }
    let segs: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    if let (Some(Fault::Twice), ["repos", o, r, tail @ ..]) = (&fault, segs.as_slice())
        && *o == super::OWNER
        && *r == super::REPO
    {
        let _racer = repo_route(s, &method, tail, &caller, req);
    }
    let reply = match (method.as_str(), segs.as_slice()) {
        ("GET", ["version"]) => ok(200, &json!({ "version": s.version })),
        ("GET", ["settings", "api"]) => ok(
            200,
            &json!({
                "max_response_items": s.max_response_items, "default_paging_num": s.default_paging_num,
                "default_git_trees_per_page": 1000, "default_max_blob_size": 10485760,
            }),
        ),
        ("GET", ["user"]) => match need(s, &caller, "read:user", true) {
            Err(r) => r,
            Ok(u) => ok(200, &views::user(s, &u, true)),
        },
        // The repository itself sits in the `repository` scope group (issues and labels are
        // in `issue`): a token without read:repository gets 403 before the repository is even
        // looked up, so a missing repository is 403 to it too.
        ("GET", ["repos", o, r]) => match need(s, &caller, "read:repository", false) {
            Err(reply) => reply,
            Ok(_) if *o == super::OWNER && *r == super::REPO => {
                ok(200, &views::repository(s, caller.as_ref()))
            }
            Ok(_) => not_found(s, "The target couldn't be found.", &[]),
        },
        (m, ["repos", o, r, tail @ ..]) if *o == super::OWNER && *r == super::REPO => {
            repo_route(s, m, tail, &caller, req)
        }
        _ => not_found(s, "The target couldn't be found.", &[]),
    };
    if commit_then_fail {
        return error(s, 500, "");
    }
    match fault {
        Some(Fault::CommitThenDelay(d)) => reply.set_delay(d),
        _ => reply,
    }
}

/// A fault injected for a read: its suffix starts `GET ` (`"GET /issues/1"`), so the faults
/// meant for writes (`"/comments"`) never hit the lists.
fn take_read_fault(s: &mut State, path: &str) -> Option<Fault> {
    let at = s.faults.iter().position(|(suffix, _)| {
        suffix
            .strip_prefix("GET ")
            .is_some_and(|suffix| path.ends_with(suffix))
    })?;
    s.faults.remove(at).map(|(_, f)| f)
}

fn take_fault(s: &mut State, path: &str) -> Option<Fault> {
    let at = s
        .faults
        .iter()
        .position(|(suffix, _)| path.ends_with(suffix.as_str()))?;
    s.faults.remove(at).map(|(_, f)| f)
}

/// `Authorization: token|bearer <40 hex>` or Basic with the token as password (or as user name
/// with an empty or `x-oauth-basic` password). No header means anonymous. Anything else is 401.
fn authenticate(s: &State, req: &Request) -> Result<Option<UserRow>, Reply> {
    let Some(value) = req
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(None);
    };
    let fields: Vec<&str> = value.split_whitespace().collect();
    let token = match fields.as_slice() {
        [scheme, token]
            if scheme.eq_ignore_ascii_case("token") || scheme.eq_ignore_ascii_case("bearer") =>
        {
            token.to_string()
        }
        [scheme, b64] if scheme.eq_ignore_ascii_case("basic") => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&decoded).to_string();
            match text.split_once(':') {
                Some((user, "" | "x-oauth-basic")) => user.to_string(),
                Some((_, password)) => password.to_string(),
                None => String::new(),
            }
        }
        _ => String::new(),
    };
    let valid = token.len() == 40
        && token
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    match s.users.iter().find(|u| valid && u.token == token) {
        Some(u) => Ok(Some(u.clone())),
        None => Err(error(
            s,
            401,
            &format!("access token does not exist [sha: {token}]"),
        )),
    }
}

/// Scope check: `write:issue` implies `read:issue`. Writes and `/user` need a token at all.
fn need(
    s: &State,
    caller: &Option<UserRow>,
    scope: &str,
    token_required: bool,
) -> Result<UserRow, Reply> {
    let anonymous = UserRow {
        id: 0,
        login: String::new(),
        token: String::new(),
        scopes: vec![],
        writer: false,
    };
    match caller {
        None if token_required => Err(error(s, 401, "token is required")),
        None => Ok(anonymous),
        Some(u) => {
            let has = u.scopes.contains(&scope)
                || (scope == "read:issue" && u.scopes.contains(&"write:issue"));
            if has {
                Ok(u.clone())
            } else {
                Err(error(
                    s,
                    403,
                    &format!("token does not have at least one of required scope(s): [{scope}]"),
                ))
            }
        }
    }
}

pub fn query(req: &Request, key: &str) -> Option<String> {
    req.url
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// Go's `ctx.FormInt`: anything unparsable is 0.
pub fn int(req: &Request, key: &str) -> i64 {
    query(req, key)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// `since`/`before`: RFC 3339, truncated to seconds; ignored when <= 0; 422 when malformed.
pub fn bound(s: &State, req: &Request, key: &str) -> Result<Option<i64>, Reply> {
    match query(req, key) {
        None => Ok(None),
        Some(v) => match chrono::DateTime::parse_from_rfc3339(v.trim()) {
            Ok(t) => Ok(Some(t.timestamp()).filter(|&u| u > 0)),
            Err(e) => Err(error(s, 422, &format!("parsing time {v:?}: {e}"))),
        },
    }
}

pub fn body(req: &Request) -> Value {
    serde_json::from_slice(&req.body).unwrap_or(Value::Null)
}

/// The `body` field of a comment request, `""` when absent.
pub fn body_text(req: &Request) -> String {
    body(req)
        .get("body")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn repo_route(
    s: &mut State,
    method: &str,
    tail: &[&str],
    caller: &Option<UserRow>,
    req: &Request,
) -> Reply {
    let write = method != "GET";
    let u = match need(
        s,
        caller,
        if write { "write:issue" } else { "read:issue" },
        write,
    ) {
        Ok(u) => u,
        Err(r) => return r,
    };
    let number = |seg: &str| seg.parse::<u64>().ok();
    match (method, tail) {
        ("GET", ["issues"]) => list_issues(s, req, tail),
        ("POST", ["issues"]) => create_issue(s, &u, req),
        ("GET", ["labels"]) => list_labels(s, req),
        ("POST", ["labels"]) => create_label(s, &u, req),
        ("DELETE", ["labels", id]) => {
            if !u.writer {
                return empty(403);
            }
            let id: i64 = id.parse().unwrap_or(-1);
            let before = s.labels.len();
            s.labels.retain(|l| l.id != id);
            for i in &mut s.issues {
                i.labels.retain(|l| *l != id);
            }
            if s.labels.len() == before {
                not_found(s, "The target couldn't be found.", &[])
            } else {
                empty(204)
            }
        }
        ("GET", ["issues", "comments"]) => list_repo_comments(s, req),
        ("PATCH" | "DELETE", ["issues", "comments", id]) => edit_comment(s, &u, method, id, req),
        (_, ["issues", n, rest @ ..]) => match number(n) {
            Some(n) => issue_route(s, method, n, rest, &u, req),
            None => not_found(s, "The target couldn't be found.", &[]),
        },
        _ => not_found(s, "The target couldn't be found.", &[]),
    }
}

fn issue_route(
    s: &mut State,
    method: &str,
    n: u64,
    rest: &[&str],
    u: &UserRow,
    req: &Request,
) -> Reply {
    let Some(issue) = s.issues.iter().find(|i| i.number == n).cloned() else {
        return match rest {
            ["comments"] => not_found(
                s,
                "IsErrIssueNotExist",
                &[format!(
                    "issue does not exist [id: 0, repo_id: {}, index: {n}]",
                    s.repo_id
                )],
            ),
            _ => not_found(s, "The target couldn't be found.", &[]),
        };
    };
    match (method, rest) {
        ("GET", []) => ok(200, &views::issue(s, &issue, Some(u.id))),
        ("PATCH", []) => {
            if issue.poster != u.id && !u.writer {
                return empty(403);
            }
            let b = body(req);
            let now = s.now();
            let Some(row) = s.issue_mut(n) else {
                return empty(500);
            };
            if let Some(state) = b.get("state").and_then(Value::as_str) {
                let close = state == "closed";
                if close != row.closed {
                    row.closed = close;
                    row.closed_at = close.then_some(now);
                }
            }
            if let Some(title) = b
                .get("title")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                row.title = title.to_string();
            }
            if let Some(text) = b.get("body").and_then(Value::as_str) {
                row.body = text.to_string();
            }
            row.updated = now;
            let row = row.clone();
            ok(201, &views::issue(s, &row, Some(u.id)))
        }
        ("POST", ["labels"]) => {
            if !u.writer {
                return empty(403);
            }
            let ids: Vec<i64> = match body(req).get("labels").and_then(Value::as_array) {
                Some(items) if items.iter().all(Value::is_i64) => {
                    items.iter().filter_map(Value::as_i64).collect()
                }
                Some(items) if items.iter().all(Value::is_string) => {
                    let names: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                    s.labels
                        .iter()
                        .filter(|l| names.contains(&l.name.as_str()))
                        .map(|l| l.id)
                        .collect()
                }
                _ => return error(s, 400, "labels should be an array of strings or integers"),
            };
            let known: Vec<i64> = ids
                .into_iter()
                .filter(|id| s.labels.iter().any(|l| l.id == *id))
                .collect();
            let Some(row) = s.issue_mut(n) else {
                return empty(500);
            };
            for id in known {
                if !row.labels.contains(&id) {
                    row.labels.push(id);
                }
            }
            let row = row.clone();
            let list: Vec<Value> = row
                .labels
                .iter()
                .filter_map(|id| s.labels.iter().find(|l| l.id == *id))
                .map(|l| views::label(s, l))
                .collect();
            ok(200, &Value::Array(list))
        }
        ("GET", ["comments"]) => {
            let (since, before) = match (bound(s, req, "since"), bound(s, req, "before")) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(r), _) | (_, Err(r)) => return r,
            };
            let mut list: Vec<&CommentRow> = s
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .filter(|c| {
                    since.is_none_or(|t| c.updated >= t) && before.is_none_or(|t| c.updated <= t)
                })
                .collect();
            list.sort_by_key(|c| (c.created, c.id));
            // In Forgejo's key order (the poster before the body), as a streaming reader sees it.
            let items: Vec<String> = list.iter().map(|c| views::comment_text(s, c)).collect();
            views::ok_text(200, format!("[{}]", items.join(",")))
                .insert_header("X-Total-Count", items.len().to_string().as_str())
                .insert_header("Access-Control-Expose-Headers", "X-Total-Count")
        }
        ("POST", ["comments"]) => {
            let mut text = body_text(req);
            if text.is_empty() {
                return error(s, 422, "[Body]: Required");
            }
            if s.crlf {
                text = text.replace("\r\n", "\n").replace('\n', "\r\n");
            }
            let now = s.now();
            let id = s.next_comment_id;
            s.next_comment_id += 3;
            let row = CommentRow {
                id,
                issue: n,
                poster: u.id,
                body: text,
                created: now,
                updated: now,
            };
            s.comments.push(row.clone());
            if let Some(issue) = s.issue_mut(n) {
                issue.updated = now;
                issue.comments += 1;
            }
            ok(201, &views::comment(s, &row))
        }
        _ => not_found(s, "The target couldn't be found.", &[]),
    }
}
