//! The fake's list endpoints: issues (paginated, `Link`, ALL-label semantics) and labels.

use reqwest::Url;
use serde_json::Value;
use wiremock::Request;

use super::routes::{Reply, bound, int, query};
use super::views::{self, ok};
use super::{IssueRow, LabelRow, State};

pub fn list_labels(s: &State, req: &Request) -> Reply {
    let total = s.labels.len();
    let mut labels: Vec<&LabelRow> = s.labels.iter().collect();
    labels.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    let page = int(req, "page");
    if page >= 1 {
        let limit = clamp_limit(s, int(req, "limit"));
        labels = labels
            .into_iter()
            .skip(((page - 1) * limit) as usize)
            .take(limit as usize)
            .collect();
    }
    let items: Vec<Value> = labels.iter().map(|l| views::label(s, l)).collect();
    ok(200, &Value::Array(items))
        .insert_header("X-Total-Count", total.to_string().as_str())
        .insert_header("Access-Control-Expose-Headers", "X-Total-Count")
}

pub fn clamp_limit(s: &State, limit: i64) -> i64 {
    if limit <= 0 {
        i64::from(s.default_paging_num)
    } else {
        limit.min(i64::from(s.max_response_items))
    }
}

pub fn list_issues(s: &State, req: &Request, tail: &[&str]) -> Reply {
    let (since, before) = match (bound(s, req, "since"), bound(s, req, "before")) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    let state = query(req, "state").unwrap_or_default();
    let kind = query(req, "type").unwrap_or_default();
    // ALL semantics over label ids; names that do not exist are dropped, and when none exists
    // the filter is not applied at all.
    let names: Vec<String> = query(req, "labels")
        .map(|v| {
            v.split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let wanted: Vec<i64> = s
        .labels
        .iter()
        .filter(|l| names.contains(&l.name))
        .map(|l| l.id)
        .collect();
    let mut matches: Vec<&IssueRow> = s
        .issues
        .iter()
        .filter(|i| match state.as_str() {
            "closed" => i.closed,
            "all" => true,
            _ => !i.closed,
        })
        .filter(|i| match kind.as_str() {
            "issues" => !i.is_pull,
            "pulls" => i.is_pull,
            _ => true,
        })
        .filter(|i| wanted.iter().all(|id| i.labels.contains(id)))
        .filter(|i| since.is_none_or(|t| i.updated >= t) && before.is_none_or(|t| i.updated <= t))
        .collect();
    matches.sort_by(|a, b| b.created.cmp(&a.created).then(b.id.cmp(&a.id)));
    let total = matches.len() as i64;
    let limit = clamp_limit(s, int(req, "limit"));
    let page = int(req, "page").max(1);
    let items: Vec<Value> = matches
        .iter()
        .skip(((page - 1) * limit) as usize)
        .take(limit as usize)
        .map(|i| views::issue(s, i, None))
        .collect();
    let mut reply =
        ok(200, &Value::Array(items)).insert_header("X-Total-Count", total.to_string().as_str());
    let link = link_header(s, req, tail, total, limit, page);
    if link.is_empty() {
        reply = reply.insert_header("Access-Control-Expose-Headers", "X-Total-Count");
    } else {
        reply = reply
            .insert_header("Link", link.as_str())
            .insert_header("Access-Control-Expose-Headers", "Link, X-Total-Count");
    }
    reply
}

/// `genAPILinks`: next, last, first, prev joined by ',' with sorted, re-encoded queries.
fn link_header(
    s: &State,
    req: &Request,
    tail: &[&str],
    total: i64,
    limit: i64,
    page: i64,
) -> String {
    let pages = ((total + limit - 1) / limit).max(1);
    let current = page.min(pages);
    let url_for = |p: i64| {
        let mut pairs: Vec<(String, String)> = req
            .url
            .query_pairs()
            .filter(|(k, _)| k != "page")
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        pairs.push(("page".into(), p.to_string()));
        pairs.sort();
        let mut url = Url::parse(&format!(
            "{}api/v1/repos/{}/{}/{}",
            s.root,
            super::OWNER,
            super::REPO,
            tail.join("/")
        ))
        .expect("fake root is a URL");
        url.query_pairs_mut().extend_pairs(pairs);
        url.to_string()
    };
    let mut links = Vec::new();
    if total > current * limit {
        links.push(format!("<{}>; rel=\"next\"", url_for(current + 1)));
    }
    if current != pages {
        links.push(format!("<{}>; rel=\"last\"", url_for(pages)));
    }
    if current != 1 {
        links.push(format!("<{}>; rel=\"first\"", url_for(1)));
    }
    if current > 1 {
        links.push(format!("<{}>; rel=\"prev\"", url_for(current - 1)));
    }
    links.join(",")
}

/// `GET /repos/{o}/{r}/issues/comments` (ENDPOINTS.md §3.10): the plain comments of every issue
/// and pull request, inclusive `since`/`before` on `updated_at`, ordered by (created, id).
/// Paginated only when `page >= 1` (the limit defaults to the instance's `default_paging_num`,
/// 30, and is clamped to its `max_response_items`, 50, as `GetListOptions` does, §2); otherwise
/// every match, the limit ignored. `X-Total-Count` is the total across pages; never a `Link` header.
pub fn list_repo_comments(s: &State, req: &Request) -> Reply {
    let (since, before) = match (bound(s, req, "since"), bound(s, req, "before")) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    let mut list: Vec<&super::CommentRow> = s
        .comments
        .iter()
        .filter(|c| since.is_none_or(|t| c.updated >= t) && before.is_none_or(|t| c.updated <= t))
        .collect();
    list.sort_by_key(|c| (c.created, c.id));
    let total = list.len();
    let page = int(req, "page");
    let items: Vec<String> = if page >= 1 {
        let limit = clamp_limit(s, int(req, "limit"));
        list.iter()
            .skip(((page - 1) * limit) as usize)
            .take(limit as usize)
            .map(|c| views::comment_text(s, c))
            .collect()
    } else {
        list.iter().map(|c| views::comment_text(s, c)).collect()
    };
    views::ok_text(200, format!("[{}]", items.join(",")))
        .insert_header("X-Total-Count", total.to_string().as_str())
        .insert_header("Access-Control-Expose-Headers", "X-Total-Count")
}
