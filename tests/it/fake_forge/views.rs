//! JSON views of the fake's rows, with every key the real server sends (`ENDPOINTS.md` §4).

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use super::{CommentRow, IssueRow, LabelRow, State, UserRow, ts};

pub const JSON: &str = "application/json;charset=utf-8";

/// A User. `privileged` is the self/admin view; comment posters get the non-privileged one.
pub fn user(s: &State, u: &UserRow, privileged: bool) -> Value {
    let domain = s
        .root
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    json!({
        "id": u.id,
        "login": u.login,
        "login_name": "",
        "source_id": 0,
        "full_name": "",
        "email": if privileged { format!("{}@example.com", u.login) } else { format!("{}@noreply.{domain}", u.login.to_lowercase()) },
        "avatar_url": format!("{}avatars/{}", s.root, u.id),
        "html_url": format!("{}{}", s.root, u.login),
        "language": if privileged { "en-US" } else { "" },
        "is_admin": false,
        "last_login": if privileged { ts(s.now()) } else { "0001-01-01T00:00:00Z".to_string() },
        "created": "2025-03-02T09:15:27Z",
        "restricted": false,
        "active": privileged,
        "prohibit_login": false,
        "location": "",
        "pronouns": "",
        "website": "",
        "description": "",
        "visibility": "public",
        "followers_count": 0,
        "following_count": 0,
        "starred_repos_count": 0,
        "username": u.login,
    })
}

pub fn label(s: &State, l: &LabelRow) -> Value {
    json!({
        "id": l.id,
        "name": l.name,
        "exclusive": false,
        "is_archived": false,
        "color": l.color,
        "description": l.description,
        "url": format!("{}api/v1/repos/{}/{}/labels/{}", s.root, super::OWNER, super::REPO, l.id),
    })
}

pub fn issue(s: &State, i: &IssueRow, caller: Option<i64>) -> Value {
    let poster = s.user(i.poster).cloned().unwrap_or(UserRow {
        id: -1,
        login: "Ghost".into(),
        token: String::new(),
        scopes: vec![],
        writer: false,
    });
    let labels: Vec<Value> = i
        .labels
        .iter()
        .filter_map(|id| s.labels.iter().find(|l| l.id == *id))
        .map(|l| label(s, l))
        .collect();
    let kind = if i.is_pull { "pulls" } else { "issues" };
    json!({
        "id": i.id,
        "url": format!("{}api/v1/repos/{}/{}/issues/{}", s.root, super::OWNER, super::REPO, i.number),
        "html_url": format!("{}{}/{}/{kind}/{}", s.root, super::OWNER, super::REPO, i.number),
        "number": i.number,
        "user": user(s, &poster, caller == Some(i.poster)),
        "original_author": "",
        "original_author_id": 0,
        "title": i.title,
        "body": i.body,
        "ref": "",
        "assets": [],
        "labels": labels,
        "milestone": null,
        "assignee": null,
        "assignees": null,
        "state": if i.closed { "closed" } else { "open" },
        "is_locked": false,
        "comments": i.comments,
        "created_at": ts(i.created),
        "updated_at": ts(i.updated),
        "closed_at": i.closed_at.map(ts),
        "due_date": null,
        "pull_request": if i.is_pull { json!({"merged": false, "merged_at": null}) } else { Value::Null },
        "repository": {"id": s.repo_id, "name": super::REPO, "owner": super::OWNER,
                       "full_name": format!("{}/{}", super::OWNER, super::REPO)},
        "pin_order": 0,
    })
}

/// A comment's JSON text with its keys in the order Forgejo writes them (Go struct order: the
/// `user` before the `body`), which a streaming reader may rely on; `Value` would sort them.
pub fn comment_text(s: &State, c: &CommentRow) -> String {
    const ORDER: [&str; 11] = [
        "id",
        "html_url",
        "pull_request_url",
        "issue_url",
        "user",
        "original_author",
        "original_author_id",
        "body",
        "assets",
        "created_at",
        "updated_at",
    ];
    let view = comment(s, c);
    let Some(map) = view.as_object() else {
        return view.to_string();
    };
    let known = ORDER.iter().filter_map(|k| map.get_key_value(*k));
    let extra = map.iter().filter(|(k, _)| !ORDER.contains(&k.as_str()));
    let fields: Vec<String> = known
        .chain(extra)
        .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
        .collect();
    format!("{{{}}}", fields.join(","))
}

pub fn comment(s: &State, c: &CommentRow) -> Value {
    let poster = s.user(c.poster).cloned().unwrap_or(UserRow {
        id: -1,
        login: "Ghost".into(),
        token: String::new(),
        scopes: vec![],
        writer: false,
    });
    let issue_url = format!(
        "{}{}/{}/issues/{}",
        s.root,
        super::OWNER,
        super::REPO,
        c.issue
    );
    let mut view = json!({
        "id": c.id,
        "html_url": format!("{issue_url}#issuecomment-{}", c.id),
        "pull_request_url": "",
        "issue_url": issue_url,
        "user": user(s, &poster, false),
        "original_author": "",
        "original_author_id": 0,
        "body": c.body,
        "assets": [],
        "created_at": ts(c.created),
        "updated_at": ts(c.updated),
    });
    for (_, overlay) in s.comment_overlays.iter().filter(|(id, _)| *id == c.id) {
        if let (Some(view), Some(keys)) = (view.as_object_mut(), overlay.as_object()) {
            view.extend(keys.clone());
        }
    }
    view
}

/// A Repository (`GET /repos/{o}/{r}`) as `caller` sees it: `permissions` is the caller's
/// access (`null` for an anonymous caller), `owner` the full User object. Only the keys a client
/// may read are filled with care; the rest have the server's types and plain values.
pub fn repository(s: &State, caller: Option<&UserRow>) -> Value {
    let full_name = format!("{}/{}", super::OWNER, super::REPO);
    let open = s.issues.iter().filter(|i| !i.closed && !i.is_pull).count();
    let owner = UserRow {
        id: 3,
        login: super::OWNER.into(),
        token: String::new(),
        scopes: vec![],
        writer: false,
    };
    // Two halves: one `json!` this long passes the macro recursion limit.
    let mut view = json!({
        "id": s.repo_id,
        "owner": user(s, &owner, false),
        "name": super::REPO,
        "full_name": full_name,
        "description": "",
        "empty": false,
        "private": false,
        "fork": false,
        "template": false,
        "parent": null,
        "mirror": false,
        "size": 1024,
        "language": "",
        "languages_url": format!("{}api/v1/repos/{full_name}/languages", s.root),
        "html_url": format!("{}{full_name}", s.root),
        "url": format!("{}api/v1/repos/{full_name}", s.root),
        "link": "",
        "ssh_url": format!("git@127.0.0.1:{full_name}.git"),
        "clone_url": format!("{}{full_name}.git", s.root),
        "original_url": "",
        "website": "",
        "stars_count": 0,
        "forks_count": 0,
        "watchers_count": 1,
        "open_issues_count": open,
        "open_pr_counter": 0,
        "release_counter": 0,
        "default_branch": "main",
        "archived": false,
        "created_at": "2025-03-02T09:15:27Z",
        "updated_at": ts(s.now()),
        "archived_at": "1970-01-01T00:00:00Z",
        "permissions": caller.map(|u| json!({"admin": false, "push": u.writer, "pull": true})),
    });
    let rest = json!({
        "has_issues": true,
        "internal_tracker": {"enable_time_tracker": true, "allow_only_contributors_to_track_time": true, "enable_issue_dependencies": true},
        "has_wiki": true,
        "has_pull_requests": true,
        "has_projects": true,
        "has_releases": true,
        "has_packages": true,
        "has_actions": true,
        "ignore_whitespace_conflicts": false,
        "allow_merge_commits": true,
        "allow_rebase": true,
        "allow_rebase_explicit": true,
        "allow_squash_merge": true,
        "allow_fast_forward_only_merge": true,
        "allow_rebase_update": true,
        "default_delete_branch_after_merge": false,
        "default_merge_style": "merge",
        "default_allow_maintainer_edit": false,
        "avatar_url": "",
        "internal": false,
        "mirror_interval": "",
        "object_format_name": "sha1",
        "mirror_updated": "0001-01-01T00:00:00Z",
        "repo_transfer": null,
        "topics": [],
    });
    if let (Some(view), Some(rest)) = (view.as_object_mut(), rest.as_object()) {
        view.extend(rest.clone());
    }
    view
}

/// An `APIError` answer: `{"message", "url"}`.
pub fn error(s: &State, status: u16, message: &str) -> ResponseTemplate {
    let body = json!({"message": message, "url": format!("{}api/swagger", s.root)});
    ResponseTemplate::new(status).set_body_raw(body.to_string(), JSON)
}

/// An `APINotFound` answer: `{"message", "url", "errors"}`.
pub fn not_found(s: &State, message: &str, errors: &[String]) -> ResponseTemplate {
    let body =
        json!({"message": message, "url": format!("{}api/swagger", s.root), "errors": errors});
    ResponseTemplate::new(404).set_body_raw(body.to_string(), JSON)
}

/// A status with no body at all (several 403s, every 204).
pub fn empty(status: u16) -> ResponseTemplate {
    ResponseTemplate::new(status)
}

pub fn ok(status: u16, body: &Value) -> ResponseTemplate {
    ok_text(status, body.to_string())
}

/// [`ok`] with a body already written as JSON text.
pub fn ok_text(status: u16, body: String) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_raw(body, JSON)
        .insert_header(
            "Cache-Control",
            "max-age=0, private, must-revalidate, no-transform",
        )
        .insert_header("X-Content-Type-Options", "nosniff")
        .insert_header("X-Frame-Options", "SAMEORIGIN")
}
