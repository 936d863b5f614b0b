//! Every example response in `tests/fixtures/forgejo-api/` (the Forgejo answers of
//! `../shared/forgejo-api/examples/`, including the real recordings, committed so a plain clone
//! tests them) decodes with the client's own wire types. (Their pagination headers are checked by the unit
//! tests of `src/forge/page.rs`, which is private to the crate.)

use crate::common;
use std::path::{Path, PathBuf};

use forgestate::forge::{
    ApiError, ApiSettings, Comment, CommentId, CommentList, Issue, IssueState, Label,
    ServerVersion, User,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn examples() -> PathBuf {
    common::fixture("forgejo-api")
}

fn decode<T: DeserializeOwned>(name: &str, text: &str) -> T {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The body of a recorded `.http` file (after the headers).
fn recorded(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let (_, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    body.trim().to_string()
}

#[test]
fn every_example_file_decodes() {
    let mut seen = 0;
    for entry in std::fs::read_dir(examples()).expect("examples dir") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() || name.ends_with(".md") {
            continue;
        }
        let text = common::read_text(&path);
        match name.as_str() {
            "comment.json" => {
                let c: Comment = decode(&name, &text);
                assert_eq!(c.user.unwrap().login, "ca-bot");
                assert!(
                    c.issue_url.ends_with("/issues/57"),
                    "issue_url is the HTML URL"
                );
            }
            "comments-list-page.json" => {
                let list: Vec<Comment> = decode(&name, &text);
                assert!(
                    list.windows(2)
                        .all(|w| (w[0].created_at, w[0].id) <= (w[1].created_at, w[1].id))
                );
            }
            "issue.json" => {
                let i: Issue = decode(&name, &text);
                assert_eq!(i.state, IssueState::Open);
                assert!(i.has_label("Type/Automation"));
                assert_eq!(
                    (i.assignees, i.milestone, i.closed_at, i.pull_request),
                    (None, None, None, None)
                );
            }
            "label.json" => assert_eq!(decode::<Label>(&name, &text).color, "1d76db"),
            "user.json" | "user-as-embedded-in-comment.json" => {
                let u: User = decode(&name, &text);
                // The server's own marshaller repeats the login as `username`.
                let raw: Value = decode(&name, &text);
                assert_eq!(raw["username"].as_str(), Some(u.login.as_str()));
                assert!(u.id > 0 && u.created.is_some());
            }
            "settings-api.json" => {
                assert_eq!(decode::<ApiSettings>(&name, &text).max_response_items, 50)
            }
            "version.json" => assert!(decode::<ServerVersion>(&name, &text).is_forgejo()),
            "error.json" | "error-not-found.json" => {
                assert!(!decode::<ApiError>(&name, &text).message.is_empty());
            }
            "errors-catalog.json" => {
                let cases: Vec<Value> = decode(&name, &text);
                for case in cases.iter().filter(|c| c["body"].is_object()) {
                    let _: ApiError = serde_json::from_value(case["body"].clone()).unwrap();
                }
            }
            "response-headers.json" => {
                let doc: serde_json::Map<String, Value> = decode(&name, &text);
                for (scenario, v) in doc.iter().filter(|(k, _)| !k.starts_with('_')) {
                    let Some(l) = v["headers"]["Link"].as_str() else {
                        continue;
                    };
                    assert!(l.contains("rel=\"first\""), "{scenario}");
                }
            }
            other => panic!("unhandled example {other}: teach this test to decode it"),
        }
        seen += 1;
    }
    assert!(seen >= 12, "read {seen} example files");
}

#[test]
fn every_recorded_response_decodes() {
    let mut seen = 0;
    for entry in std::fs::read_dir(examples().join("recorded")).expect("recorded dir") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let body = recorded(&common::read_text(&path));
        if name.contains("settings-api") {
            assert!(decode::<ApiSettings>(&name, &body).max_response_items > 0);
        } else if name.contains("version") {
            let v: ServerVersion = decode(&name, &body);
            assert!(!v.describe().is_empty());
        } else if name.contains("issue-comments") {
            let list: Vec<Comment> = decode(&name, &body);
            assert!(!list.is_empty());
        } else if name.contains("issues-list") {
            let list: Vec<Issue> = decode(&name, &body);
            assert!(!list.is_empty());
        } else if name.contains("labels-list") {
            assert!(!decode::<Vec<Label>>(&name, &body).is_empty());
        } else {
            panic!("unhandled recording {name}");
        }
        seen += 1;
    }
    assert_eq!(seen, 8);
}

#[test]
fn forgejo_and_gitea_versions_are_told_apart() {
    let f = ServerVersion {
        version: "11.0.0-dev-617-1d1e0ced3e+gitea-1.22.0".into(),
    };
    assert!(f.is_forgejo());
    assert_eq!(
        f.describe(),
        "Forgejo 11.0.0-dev-617-1d1e0ced3e (Gitea 1.22.0 compatible)"
    );
    let g = ServerVersion {
        version: "1.23.0".into(),
    };
    assert!(!g.is_forgejo());
    assert_eq!(g.describe(), "Gitea 1.23.0");
}

#[test]
fn timestamps_in_the_servers_display_zone_are_the_same_instants() {
    // Servers render times in their display zone (`DEFAULT_UI_LOCATION`), so offsets occur.
    let text = common::read_text(&examples().join("comment.json"));
    let utc: Comment = decode("comment.json", &text);
    let shifted = text
        .replace(
            "\"created_at\": \"2026-07-14T09:47:31Z\"",
            "\"created_at\": \"2026-07-14T11:47:31+02:00\"",
        )
        .replace(
            "\"updated_at\": \"2026-07-14T09:47:31Z\"",
            "\"updated_at\": \"2026-07-14T04:47:31-05:00\"",
        );
    assert_eq!(shifted.matches("+02:00").count(), 1);
    assert_eq!(shifted.matches("-05:00").count(), 1);
    let zoned: Comment = decode("comment.json (zoned)", &shifted);
    assert_eq!(zoned.created_at, utc.created_at);
    assert_eq!(zoned.updated_at, utc.updated_at);
}

#[test]
fn a_comment_list_is_decoded_element_by_element() {
    // The shape of `examples/comment.json` (inline: this test runs without `../shared`).
    let good = json!({
        "id": 1207,
        "html_url": "https://forge.example.com/acme/app/issues/57#issuecomment-1207",
        "pull_request_url": "",
        "issue_url": "https://forge.example.com/acme/app/issues/57",
        "user": {"id": 7, "login": "ca-bot", "login_name": "", "full_name": "",
                 "email": "ca-bot@noreply.forge.example.com", "is_admin": false,
                 "created": "2025-03-02T09:15:27Z", "username": "ca-bot"},
        "original_author": "",
        "original_author_id": 0,
        "body": "[CHECKPOINT] w",
        "assets": [],
        "created_at": "2026-07-14T09:47:31Z",
        "updated_at": "2026-07-14T09:47:31Z",
    });
    let with = |key: &str, value: Value| {
        let mut v = good.clone();
        v[key] = value;
        v
    };
    let mut no_body = good.clone();
    no_body.as_object_mut().unwrap().remove("body");
    let items = vec![
        good.clone(),
        with("body", Value::Null),
        with("user", Value::Null),
        with("user", json!({"id": 3, "login": null})),
        with("id", json!("1200")),
        with("updated_at", json!("yesterday")),
        no_body,
        json!("a string"),
        // Fields forgestate does not read never make a comment unreadable.
        with("assets", Value::Null),
        with("pull_request_url", json!(5)),
        with("issue_url", json!(5)),
    ];
    let list = CommentList::decode(items);
    assert_eq!(list.comments.len(), 4, "{:?}", list.unreadable);
    assert_eq!(list.comments[1].body, "[CHECKPOINT] w");
    assert_eq!(
        list.comments[2].user.as_ref().map(|u| u.login.as_str()),
        Some("ca-bot")
    );
    assert_eq!(list.comments[3].issue_url, "");
    let reasons: Vec<&str> = list.unreadable.iter().map(|u| u.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "`body` is null, expected a string",
            "`user` is null: the poster is unknown",
            "`user` is not a user: invalid type: null, expected a string",
            "`id` is a string, expected a comment id",
            "`updated_at` is a string, expected an RFC 3339 time",
            "`body` is missing",
            "not a JSON object but a string",
        ]
    );
    let id = good["id"].as_u64().map(CommentId);
    assert_eq!(list.unreadable[0].id, id, "the id is salvaged");
    assert_eq!(list.unreadable[0].login.as_deref(), Some("ca-bot"));
    assert!(list.unreadable[0].created_at.is_some());
    assert_eq!(list.unreadable[3].id, None, "an odd id is not guessed");
    assert_eq!(list.unreadable[6].id, None);
}

#[test]
fn missing_reference_material_is_one_line_naming_it_and_every_place_tried() {
    let root = tempfile::tempdir().unwrap();
    let manifest = root.path().join("wt/tests");
    let what = "the Forgejo API example responses";
    let err = common::find_shared_from(&manifest, "forgejo-api/examples", what).unwrap_err();
    assert!(
        err.starts_with(
            "../shared/forgejo-api/examples is missing (the Forgejo API example responses): the \
             reference material must sit beside the checkout; see ../shared/README.md"
        ),
        "{err}"
    );
    for tried in [
        "wt/shared/forgejo-api/examples",
        "shared/forgejo-api/examples",
    ] {
        let tried = root.path().join(tried).display().to_string();
        assert!(err.contains(&tried), "names {tried}: {err}");
    }
    assert!(!err.contains('\n'), "one line: {err}");

    // Beside an ancestor (the main checkout, seen from a worktree) it is found.
    let there = root.path().join("shared/forgejo-api/examples");
    std::fs::create_dir_all(&there).unwrap();
    let found = common::find_shared_from(&manifest, "forgejo-api/examples", what).unwrap();
    assert_eq!(found, there);
    assert!(Path::new(&found).is_dir());
}

/// The committed fixtures are the reference material's answers, byte for byte, and every one of
/// them is committed (checked where `../shared` is present, as in CI; ignored on a plain clone).
#[test]
#[cfg_attr(
    no_api_examples,
    ignore = "needs ../shared/forgejo-api/examples; a plain clone has none"
)]
fn the_fixtures_are_the_reference_answers() {
    let shared = common::find_shared(
        "forgejo-api/examples",
        "the Forgejo API example responses the fixtures copy",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let theirs: Vec<PathBuf> = common::files_under(&shared)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e != "md"))
        .collect();
    assert!(theirs.len() >= 20, "{} reference answers", theirs.len());
    for path in &theirs {
        let rel = path.strip_prefix(&shared).unwrap();
        let ours = examples().join(rel);
        assert_eq!(
            std::fs::read(&ours).ok(),
            std::fs::read(path).ok(),
            "tests/fixtures/forgejo-api/{} differs from (or lacks) {}: copy it again",
            rel.display(),
            path.display()
        );
    }
    let ours = common::files_under(&examples())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e != "md"))
        .count();
    assert_eq!(
        ours,
        theirs.len(),
        "no fixture the reference material lacks"
    );
}
