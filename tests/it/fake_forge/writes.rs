//! The fake's write endpoints: creating issues and labels, editing and deleting comments.

use serde_json::Value;
use wiremock::Request;

use super::routes::{Reply, body, body_text};
use super::views::{self, empty, error, not_found, ok};
use super::{IssueRow, LabelRow, State, UserRow};

pub fn edit_comment(s: &mut State, u: &UserRow, method: &str, id: &str, req: &Request) -> Reply {
    let id: u64 = id.parse().unwrap_or(0);
    let Some(at) = s.comments.iter().position(|c| c.id == id) else {
        return not_found(
            s,
            "The target couldn't be found.",
            &[format!("comment does not exist [id: {id}, issue_id: 0]")],
        );
    };
    if s.comments[at].poster != u.id && !u.writer {
        return empty(403);
    }
    if method == "DELETE" {
        let gone = s.comments.remove(at);
        if let Some(issue) = s.issue_mut(gone.issue) {
            issue.comments -= 1;
        }
        return empty(204);
    }
    let text = body_text(req);
    if text.is_empty() {
        return error(s, 422, "[Body]: Required");
    }
    let now = s.now();
    s.comments[at].body = text;
    s.comments[at].updated = now;
    let row = s.comments[at].clone();
    ok(200, &views::comment(s, &row))
}

pub fn create_issue(s: &mut State, u: &UserRow, req: &Request) -> Reply {
    let b = body(req);
    let title = b
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if title.is_empty() {
        return error(s, 422, "[Title]: Required");
    }
    // Labels are silently dropped for callers without write access, and unknown ids skipped.
    let labels: Vec<i64> = match (u.writer, b.get("labels").and_then(Value::as_array)) {
        (true, Some(ids)) => ids
            .iter()
            .filter_map(Value::as_i64)
            .filter(|id| s.labels.iter().any(|l| l.id == *id))
            .collect(),
        _ => Vec::new(),
    };
    let now = s.now();
    let number = s.next_number();
    let row = IssueRow {
        id: s.next_issue_id,
        number,
        title,
        body: b
            .get("body")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        poster: u.id,
        labels,
        closed: false,
        is_pull: false,
        created: now,
        updated: now,
        closed_at: None,
        comments: 0,
    };
    s.next_issue_id += 1;
    s.issues.push(row.clone());
    ok(201, &views::issue(s, &row, Some(u.id)))
}

pub fn create_label(s: &mut State, u: &UserRow, req: &Request) -> Reply {
    if !u.writer {
        return error(s, 403, "user should have a permission to write to a repo");
    }
    let b = body(req);
    let name = b
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let color = b
        .get("color")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim_start_matches('#')
        .to_lowercase();
    if name.is_empty() {
        return error(s, 422, "[Name]: Required");
    }
    let color = match color.len() {
        6 if color.bytes().all(|c| c.is_ascii_hexdigit()) => color,
        3 if color.bytes().all(|c| c.is_ascii_hexdigit()) => {
            color.chars().flat_map(|c| [c, c]).collect()
        }
        _ => return error(s, 422, &format!("bad color code: {color}")),
    };
    let row = LabelRow {
        id: s.next_label_id,
        name,
        color,
        description: b
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    };
    s.next_label_id += 1;
    s.labels.push(row.clone());
    ok(201, &views::label(s, &row))
}
