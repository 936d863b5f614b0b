//! The fake server itself follows `ENDPOINTS.md` §7, so tests against it mean something.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use reqwest::StatusCode;
use serde_json::{Value, json};

struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    fn new(fake: &FakeForge) -> Api {
        Api {
            http: reqwest::Client::new(),
            base: format!("{}/api/v1/repos/{OWNER}/{REPO}", fake.uri()),
        }
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, reqwest::header::HeaderMap, String) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("Authorization", format!("token {BOT_TOKEN}"));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let (status, headers) = (resp.status(), resp.headers().clone());
        (status, headers, resp.text().await.unwrap())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn issue_list_pagination_headers_are_exact() {
    let fake = FakeForge::start().await;
    let l = fake.add_label(forgestate::defaults::LABEL);
    for n in 0..5 {
        fake.add_issue(&format!("i{n}"), &[l], false);
    }
    let api = Api::new(&fake);
    let (status, h, body) = api
        .call(
            reqwest::Method::GET,
            "/issues?state=open&type=issues&labels=Type%2FAutomation&limit=2&page=2",
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(h["x-total-count"], "5");
    assert_eq!(h["access-control-expose-headers"], "Link, X-Total-Count");
    assert_eq!(h["content-type"], "application/json;charset=utf-8");
    let base = format!(
        "{}/api/v1/repos/{OWNER}/{REPO}/issues?labels=Type%2FAutomation&limit=2",
        fake.uri()
    );
    let expected = format!(
        "<{base}&page=3&state=open&type=issues>; rel=\"next\",<{base}&page=3&state=open&type=issues>; rel=\"last\",\
         <{base}&page=1&state=open&type=issues>; rel=\"first\",<{base}&page=1&state=open&type=issues>; rel=\"prev\""
    );
    assert_eq!(h["link"], expected.as_str());
    let items: Vec<Value> = serde_json::from_str(&body).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["assignees"], Value::Null);
    assert_eq!(items[0]["milestone"], Value::Null);
    assert_eq!(items[0]["closed_at"], Value::Null);
    assert_eq!(items[0]["labels"][0]["color"], "1d76db");

    let (_, h, body) = api
        .call(reqwest::Method::GET, "/issues?limit=999", None)
        .await;
    assert_eq!(
        serde_json::from_str::<Vec<Value>>(&body).unwrap().len(),
        5,
        "limit clamps to 50, not an error"
    );
    assert!(h.get("link").is_none(), "one page: no Link");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_label_disables_the_filter_and_known_labels_need_all() {
    let fake = FakeForge::start().await;
    let a = fake.add_label("A");
    let b = fake.add_label("B");
    fake.add_issue("both", &[a, b], false);
    fake.add_issue("only a", &[a], false);
    fake.add_issue("none", &[], false);
    let api = Api::new(&fake);
    let count = |q: &'static str| {
        let api = &api;
        async move {
            serde_json::from_str::<Vec<Value>>(&api.call(reqwest::Method::GET, q, None).await.2)
                .unwrap()
                .len()
        }
    };
    assert_eq!(
        count("/issues?labels=Nope").await,
        3,
        "unknown label: no filter at all"
    );
    assert_eq!(count("/issues?labels=A").await, 2);
    assert_eq!(count("/issues?labels=A,B").await, 1, "ALL semantics");
    assert_eq!(
        count("/issues?labels=A,Nope").await,
        2,
        "unknown names are dropped"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn comments_are_unpaginated_sorted_and_since_is_inclusive_on_updated_at() {
    let fake = FakeForge::start().await;
    let n = fake.add_issue("t", &[], false);
    for i in 0..4 {
        fake.add_comment(n, "ca-bot", &format!("c{i}"));
    }
    let api = Api::new(&fake);
    let (_, h, body) = api
        .call(
            reqwest::Method::GET,
            &format!("/issues/{n}/comments?limit=1&page=2"),
            None,
        )
        .await;
    let items: Vec<Value> = serde_json::from_str(&body).unwrap();
    assert_eq!(items.len(), 4, "page and limit are ignored");
    assert_eq!(h["x-total-count"], "4");
    assert!(h.get("link").is_none());
    assert_eq!(
        items[0]["user"]["email"],
        format!(
            "ca-bot@noreply.{}",
            fake.uri().trim_start_matches("http://")
        )
    );
    assert_eq!(items[0]["user"]["last_login"], "0001-01-01T00:00:00Z");
    let updated = items[0]["updated_at"].as_str().unwrap().to_string();
    let (_, _, body) = api
        .call(
            reqwest::Method::GET,
            &format!("/issues/{n}/comments?since={updated}"),
            None,
        )
        .await;
    assert_eq!(
        serde_json::from_str::<Vec<Value>>(&body).unwrap().len(),
        4,
        "inclusive"
    );
    let (status, _, _) = api
        .call(
            reqwest::Method::GET,
            &format!("/issues/{n}/comments?since=yesterday"),
            None,
        )
        .await;
    assert_eq!(status, 422);
    let (status, _, body) = api
        .call(reqwest::Method::GET, "/issues/999/comments", None)
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["message"],
        "IsErrIssueNotExist"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn write_statuses_match_the_real_server() {
    let fake = FakeForge::start().await;
    let l = fake.add_label("L");
    let api = Api::new(&fake);
    let (status, _, body) = api
        .call(
            reqwest::Method::POST,
            "/issues",
            Some(json!({"title": "t", "labels": [l]})),
        )
        .await;
    assert_eq!(status, 201);
    let n = serde_json::from_str::<Value>(&body).unwrap()["number"]
        .as_u64()
        .unwrap();
    let (status, _, _) = api
        .call(
            reqwest::Method::PATCH,
            &format!("/issues/{n}"),
            Some(json!({"state": "closed"})),
        )
        .await;
    assert_eq!(status, 201, "editing an issue answers 201");
    let (status, _, body) = api
        .call(
            reqwest::Method::POST,
            &format!("/issues/{n}/labels"),
            Some(json!({"labels": [l]})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Vec<Value>>(&body).unwrap().len(),
        1,
        "the full label list"
    );
    let (status, _, body) = api
        .call(
            reqwest::Method::POST,
            &format!("/issues/{n}/comments"),
            Some(json!({"body": "hi"})),
        )
        .await;
    assert_eq!(status, 201);
    let id = serde_json::from_str::<Value>(&body).unwrap()["id"]
        .as_u64()
        .unwrap();
    let (status, _, body) = api
        .call(
            reqwest::Method::DELETE,
            &format!("/issues/comments/{id}"),
            None,
        )
        .await;
    assert_eq!((status.as_u16(), body.as_str()), (204, ""));
    let (status, _, _) = api
        .call(
            reqwest::Method::POST,
            &format!("/issues/{n}/comments"),
            Some(json!({"body": ""})),
        )
        .await;
    assert_eq!(status, 422);
    let unauthenticated = reqwest::Client::new()
        .post(format!("{}/issues/{n}/comments", api.base))
        .json(&json!({"body": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
    let bad = reqwest::Client::new()
        .get(format!("{}/api/v1/version", fake.uri()))
        .header("Authorization", "token nope")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401, "a bad token fails even public routes");
    let mallory = reqwest::Client::new()
        .post(format!("{}/issues/{n}/labels", api.base))
        .header(
            "Authorization",
            format!("token {}", fake_forge::MALLORY_TOKEN),
        )
        .json(&json!({"labels": [l]}))
        .send()
        .await
        .unwrap();
    assert_eq!(mallory.status(), 403);
    assert_eq!(mallory.text().await.unwrap(), "", "empty 403 body");
}

#[tokio::test]
async fn repo_comments_paginate_only_with_a_page_and_age_moves_every_time() {
    let fake = FakeForge::start().await;
    let (a, b) = (
        fake.add_issue("one", &[], false),
        fake.add_issue("two", &[], true),
    );
    for i in 0..55 {
        fake.add_comment(if i % 2 == 0 { a } else { b }, "ca-bot", &format!("c{i}"));
    }
    let api = Api::new(&fake);
    let list = |q: &'static str| {
        let api = &api;
        async move {
            let (status, headers, text) = api.call(reqwest::Method::GET, q, None).await;
            assert_eq!(status, StatusCode::OK);
            assert!(headers.get("link").is_none(), "never a Link header");
            let total = headers["x-total-count"].to_str().unwrap().to_string();
            (serde_json::from_str::<Vec<Value>>(&text).unwrap(), total)
        }
    };
    let (all, total) = list("/issues/comments?limit=5").await;
    assert_eq!(
        (all.len(), total.as_str()),
        (55, "55"),
        "no page: all, limit ignored"
    );
    let (page, total) = list("/issues/comments?page=1").await;
    assert_eq!((page.len(), total.as_str()), (30, "55"), "default limit 30");
    let (page, _) = list("/issues/comments?page=1&limit=99").await;
    assert_eq!(page.len(), 50, "capped at 50");
    let (page, _) = list("/issues/comments?page=3&limit=20").await;
    assert_eq!(page.len(), 15);
    // What a cold read sizes the list by: one comment, and the total across pages.
    let (page, total) = list("/issues/comments?page=1&limit=1").await;
    assert_eq!((page.len(), total.as_str()), (1, "55"));
    let (page, _) = list("/issues/comments?page=1&limit=0").await;
    assert_eq!(page.len(), 30, "a limit of 0 is the default");
    // The limits are the instance's (`/settings/api`), not constants.
    fake.state().max_response_items = 20;
    let (page, _) = list("/issues/comments?page=1&limit=99").await;
    assert_eq!(page.len(), 20, "clamped to max_response_items");
    fake.state().max_response_items = 50;
    // A comment posted through the web UI bumps its issue's `updated_at` (§3.11), as the API's
    // does: what the issue list's `since` finds.
    let issue = |n: u64| fake.state().issues.iter().find(|i| i.number == n).cloned();
    let (created, updated) = issue(b).map(|i| (i.created, i.updated)).unwrap();
    fake.state().issue_mut(b).unwrap().updated = created - 100;
    fake.add_comment(b, "mallory", "late");
    assert!(issue(b).unwrap().updated >= updated);
    assert!(
        all[0]["issue_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/issues/{a}"))
    );
    assert!(
        all[1]["issue_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/issues/{b}"))
    );

    // An hour ago: `since` (inclusive, on updated_at) half an hour back finds none of them.
    fake.age(3600);
    let since = (chrono::Utc::now() - chrono::Duration::minutes(30))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (status, _, text) = api
        .call(
            reqwest::Method::GET,
            &format!("/issues/comments?since={since}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(text, "[]");
    let issue = fake
        .state()
        .issues
        .iter()
        .find(|i| i.number == b)
        .cloned()
        .unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(issue.created <= now - 3600 && issue.closed_at.unwrap() <= now - 3600);
}
