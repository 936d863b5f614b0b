//! What a read discovers (the session issue's number) is written to the cache once the read is
//! done, never before its list: a cold read's list is not held back by the cache's writes.

use std::time::Duration;

use crate::fake_forge::{FakeForge, bot, session};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, ResponseTemplate};

/// The issue number the cache in `dir` holds, if any.
fn cached_issue(dir: &std::path::Path) -> Option<u64> {
    let cache = dir.join("cache");
    let file = std::fs::read_dir(&cache)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().ends_with(".json"))?;
    let entry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file.path()).ok()?).ok()?;
    entry["issue"].as_u64()
}

#[tokio::test]
async fn a_cold_read_writes_the_issue_it_found_after_its_list_not_before() {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    // The session issue's (empty) list answers late, so the read is caught in the middle.
    Mock::given(method("GET"))
        .and(path_regex(format!(
            r"^/api/v1/repos/[^/]+/[^/]+/issues/{issue}/comments$"
        )))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("[]", "application/json;charset=utf-8")
                .insert_header("X-Total-Count", "0")
                .set_delay(Duration::from_millis(400)),
        )
        .with_priority(1)
        .mount(&fake.server)
        .await;
    let cold = tempfile::tempdir().unwrap();
    let reader = bot(&fake, cold.path());
    let read = tokio::spawn(async move {
        let filter = forgestate::scan::Filter::default();
        reader.list(&filter, None).await.map(|s| s.entries.len())
    });
    // Wait for the list's request to reach the fake.
    let listed = |r: &wiremock::Request| {
        r.method.as_str() == "GET" && r.url.path().ends_with(&format!("/issues/{issue}/comments"))
    };
    let mut asked = false;
    for _ in 0..200 {
        if fake.requests().await.iter().any(listed) {
            asked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(asked, "the read never asked for the session issue's list");
    assert_eq!(
        cached_issue(cold.path()),
        None,
        "the issue's number was written before the list was asked for"
    );
    assert_eq!(read.await.unwrap().unwrap(), 0);
    assert_eq!(
        cached_issue(cold.path()),
        Some(issue),
        "the read ended without writing the issue it found"
    );
}
