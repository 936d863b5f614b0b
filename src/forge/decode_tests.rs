//! Unit tests of the streaming comment decoder.

use super::*;
use serde_json::json;

fn comment(id: u64, login: &str, body: &str) -> Value {
    json!({
        "id": id,
        "html_url": format!("https://f.example/o/r/issues/1#issuecomment-{id}"),
        "user": {"id": 7, "login": login, "created": null},
        "body": body,
        "created_at": "2026-07-14T09:47:31Z",
        "updated_at": "2026-07-14T09:48:00Z",
    })
}

/// `fields` as one JSON object, keys in the given order (as Forgejo writes them).
fn ordered(fields: &[(&str, Value)]) -> String {
    let inner: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

/// A comment with the poster before the body (Forgejo's order), or after it.
fn text(id: u64, login: &str, body: &str, user_first: bool) -> String {
    let user = ("user", json!({"id": 7, "login": login, "created": null}));
    let body = ("body", Value::from(body));
    let mut fields = vec![
        ("id", Value::from(id)),
        ("html_url", Value::from(format!("https://f.example/#{id}"))),
    ];
    if user_first {
        fields.extend([user, body]);
    } else {
        fields.extend([body, user]);
    }
    fields.push(("created_at", Value::from("2026-07-14T09:47:31Z")));
    fields.push(("updated_at", Value::from("2026-07-14T09:48:00Z")));
    ordered(&fields)
}

fn trusting(logins: &[&str], max_body: usize) -> Filter {
    let mut filter = Filter::all();
    filter.authors = Some(logins.iter().map(|l| l.to_string()).collect());
    filter.max_body = max_body;
    filter
}

fn decode(text: &str, filter: &Filter) -> Result<CommentList, Failed> {
    decode_list(text.as_bytes(), filter)
}

#[test]
fn keeping_everything_decides_every_element_as_the_whole_list_decoder_does() {
    let items = vec![
        comment(1, "ca-bot", "[CHECKPOINT] a"),
        json!(5),
        json!(12345678901234567890123_u128.to_string()),
        json!(null),
        json!([1, 2]),
        json!({"id": 3, "html_url": "x", "user": null, "body": "b",
               "created_at": "2026-07-14T09:47:31Z", "updated_at": "2026-07-14T09:47:31Z"}),
        json!({"id": 4, "html_url": "x", "user": {"id": 1, "login": "a", "created": null},
               "body": null, "created_at": "2026-07-14T09:47:31Z",
               "updated_at": "2026-07-14T09:47:31Z"}),
        json!({"id": 6, "html_url": "x", "user": {"id": 1, "login": "a", "created": null},
               "body": {"nested": true}, "created_at": "2026-07-14T09:47:31Z",
               "updated_at": "2026-07-14T09:47:31Z"}),
        json!({"id": 8, "html_url": "x", "user": {"id": 1, "login": "a", "created": null},
               "body": 1.5, "created_at": "2026-07-14T09:47:31Z",
               "updated_at": "2026-07-14T09:47:31Z"}),
        json!({"id": "nine", "body": "b"}),
        comment(10, "mallory", "hello"),
    ];
    let text = Value::Array(items.clone()).to_string();
    let streamed = decode(&text, &Filter::all()).unwrap();
    assert_eq!(streamed, CommentList::decode(items));
    assert_eq!(streamed.comments.len(), 2);
    assert_eq!(streamed.comments[1].body, "hello");
}

#[test]
fn an_untrusted_comment_is_skipped_with_its_id_author_and_times() {
    let big = "x".repeat(4096);
    let list = format!(
        "[{},{}]",
        text(1, "mallory", &big, true),
        text(2, "ca-bot", "[CHECKPOINT] mine", true)
    );
    let mut filter = trusting(&["ca-bot"], 1 << 20);
    // Skipped bodies do not count against the kept bytes.
    filter.max_kept = 100;
    let out = decode(&list, &filter).unwrap();
    assert_eq!(out.comments.len(), 1);
    assert_eq!(out.comments[0].body, "[CHECKPOINT] mine");
    let odd = &out.unreadable[0];
    assert_eq!(odd.skipped, Some(Skip::Untrusted));
    assert_eq!(odd.id.map(|i| i.0), Some(1));
    assert_eq!(odd.login.as_deref(), Some("mallory"));
    assert!(odd.updated_at > odd.created_at);
    assert!(odd.reason.contains("not trusted"), "{}", odd.reason);
}

#[test]
fn the_poster_after_the_body_is_still_filtered_at_the_end_of_the_element() {
    let list = format!(
        "[{},{}]",
        text(1, "mallory", "theirs", false),
        text(2, "ca-bot", "mine", false)
    );
    let out = decode(&list, &trusting(&["ca-bot"], 1 << 20)).unwrap();
    assert_eq!(out.comments.len(), 1);
    assert_eq!(out.comments[0].body, "mine");
    assert_eq!(out.unreadable[0].skipped, Some(Skip::Untrusted));
}

#[test]
fn a_body_over_the_cap_is_measured_and_dropped_in_either_order() {
    for user_first in [true, false] {
        let list = format!("[{}]", text(1, "ca-bot", &"é".repeat(40), user_first));
        let out = decode(&list, &trusting(&["ca-bot"], 64)).unwrap();
        assert!(out.comments.is_empty());
        assert_eq!(
            out.unreadable[0].skipped,
            Some(Skip::TooLarge { len: 80, cap: 64 })
        );
        assert_eq!(out.unreadable[0].login.as_deref(), Some("ca-bot"));
    }
}

#[test]
fn kept_bodies_over_the_listing_cap_fail_the_listing() {
    let list = format!(
        "[{},{}]",
        text(1, "ca-bot", &"a".repeat(60), true),
        text(2, "ca-bot", &"b".repeat(60), true)
    );
    let mut filter = Filter::all();
    filter.max_kept = 100;
    assert!(matches!(decode(&list, &filter), Err(Failed::OverCap)));
    filter.max_kept = 120;
    assert_eq!(decode(&list, &filter).unwrap().comments.len(), 2);
}

#[test]
fn comments_on_dropped_issues_are_left_out_with_their_bodies_unread() {
    let on = |id: u64, issue: u64, body_first: bool| {
        let url = format!("https://f.example/o/r/issues/{issue}");
        let mut fields = vec![
            ("id", Value::from(id)),
            ("html_url", Value::from(format!("{url}#issuecomment-{id}"))),
        ];
        let issue_url = ("issue_url", Value::from(url));
        let user = ("user", json!({"id": 7, "login": "ca-bot", "created": null}));
        // A body that is not a string would be an unreadable comment if it were read.
        let body = ("body", json!({"not": "read"}));
        if body_first {
            fields.extend([body, issue_url, user]);
        } else {
            fields.extend([issue_url, user, body]);
        }
        fields.push(("created_at", Value::from("2026-07-14T09:47:31Z")));
        fields.push(("updated_at", Value::from("2026-07-14T09:48:00Z")));
        ordered(&fields)
    };
    let kept = text(3, "ca-bot", "kept", true);
    let list = format!("[{},{},{kept}]", on(1, 5, false), on(2, 5, true));
    let mut filter = Filter::all();
    filter.drop_issues.insert(5);
    let out = decode(&list, &filter).unwrap();
    assert_eq!(out.comments.len(), 1);
    assert_eq!(out.comments[0].id.0, 3);
    assert!(out.unreadable.is_empty(), "{:?}", out.unreadable);
    // Without the drop, both are there (as unreadable: their bodies are not strings).
    let all = decode(&list, &Filter::all()).unwrap();
    assert_eq!(all.unreadable.len(), 2);
}

#[test]
fn only_members_bodies_count_toward_the_cap_and_other_issues_past_it_are_deferred() {
    let on = |id: u64, issue: u64, body: &str| {
        let url = format!("https://f.example/o/r/issues/{issue}");
        ordered(&[
            ("id", Value::from(id)),
            ("html_url", Value::from(format!("{url}#issuecomment-{id}"))),
            ("issue_url", Value::from(url)),
            ("user", json!({"id": 7, "login": "ca-bot", "created": null})),
            ("body", Value::from(body)),
            ("created_at", Value::from("2026-07-14T09:47:31Z")),
            ("updated_at", Value::from("2026-07-14T09:48:00Z")),
        ])
    };
    let big = "x".repeat(100);
    let list = format!(
        "[{},{},{},{},{}]",
        on(1, 1, "member"),
        on(2, 9, &big),
        on(3, 8, "small"),
        on(4, 9, "after"),
        on(5, 1, "member again"),
    );
    let mut filter = Filter::all();
    filter.max_kept = 50;
    filter.members = Some([1].into());
    let out = decode(&list, &filter).unwrap();
    let ids: Vec<u64> = out.comments.iter().map(|c| c.id.0).collect();
    assert_eq!(ids, [1, 3, 5], "issue 9 is left out, issue 8 still fits");
    assert_eq!(out.deferred, [9].into());
    assert_eq!(out.seen, 5);
    // Without members, every body counts: the same list is over the cap.
    filter.members = None;
    assert!(matches!(decode(&list, &filter), Err(Failed::OverCap)));
    // A member's own bodies past the cap still fail the read.
    filter.members = Some([9].into());
    assert!(matches!(decode(&list, &filter), Err(Failed::OverCap)));
}

#[test]
fn the_digest_sees_each_kept_body_as_it_is_decoded_and_only_those() {
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let mut filter = trusting(&["ca-bot"], 17);
    // It takes every body but the one saying "keep".
    filter.digest = Some(crate::store::Digest::new(move |id, body: &mut String| {
        log.lock().unwrap().push((id, body.clone()));
        if body != "keep" {
            body.clear();
        }
    }));
    let text = format!(
        "[{},{},{},{}]",
        text(1, "ca-bot", "[CHECKPOINT] one", true),
        text(2, "mallory", "[CHECKPOINT] forged", true),
        text(3, "ca-bot", "far too long a body", true),
        text(4, "ca-bot", "keep", true),
    );
    let list = decode(&text, &filter).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(1, "[CHECKPOINT] one".to_string()), (4, "keep".to_string())],
        "skipped comments (untrusted, over the cap) are never digested"
    );
    let bodies: Vec<(u64, &str)> = list
        .comments
        .iter()
        .map(|c| (c.id.0, c.body.as_str()))
        .collect();
    assert_eq!(bodies, vec![(1, ""), (4, "keep")]);
    assert_eq!(list.unreadable.len(), 2);
    assert_eq!(list.seen, 4);
}

/// A comment as Forgejo sends it: the poster in full and the fields forgestate does not read.
fn forgejo(id: u64, login: &str, body: &str) -> Value {
    json!({
        "id": id,
        "html_url": format!("https://f.example/o/r/issues/1#issuecomment-{id}"),
        "pull_request_url": "",
        "issue_url": "https://f.example/o/r/issues/1",
        "user": {"id": 7, "login": login, "login_name": "", "source_id": 0,
                 "full_name": "", "email": "bot@noreply.f.example", "avatar_url": "x",
                 "html_url": "x", "language": "", "is_admin": false,
                 "last_login": "0001-01-01T00:00:00Z", "created": "2026-07-01T00:00:00+02:00",
                 "restricted": false, "active": false, "prohibit_login": false,
                 "location": "", "pronouns": "", "website": "", "description": "",
                 "visibility": "public", "followers_count": 0, "following_count": 0,
                 "starred_repos_count": 0, "username": login},
        "original_author": "",
        "original_author_id": 0,
        "body": body,
        "assets": [],
        "created_at": "2026-07-14T09:47:31Z",
        "updated_at": "2026-07-14T09:48:00+00:00",
    })
}

/// Values of every JSON kind, and near misses of the expected ones.
fn odd_values() -> Vec<Option<Value>> {
    let mut values: Vec<Option<Value>> = [
        json!(null),
        json!(true),
        json!(0),
        json!(-3),
        json!(1.5),
        json!(1e3),
        json!("12"),
        json!(""),
        json!("2026-07-14"),
        json!("2026-07-14T09:47:31Z"),
        json!([]),
        json!([1, "two"]),
        json!({}),
        json!({"login": "ca-bot"}),
        json!({"id": 1, "login": "ca-bot"}),
        json!({"id": "1", "login": "ca-bot"}),
        json!({"id": 1, "login": 2}),
        json!({"id": 1, "login": "ca-bot", "created": 5}),
        json!({"id": 1, "login": "ca-bot", "created": "yesterday"}),
        json!({"id": -1, "login": "ghost", "created": null}),
        json!({"id": 1.5, "login": "ca-bot"}),
        json!({"id": 18446744073709551615_u64, "login": "ca-bot"}),
    ]
    .into_iter()
    .map(Some)
    .collect();
    values.push(Some(
        serde_json::from_str("123456789012345678901234567890").unwrap(),
    ));
    values.push(Some(serde_json::from_str("18446744073709551615").unwrap()));
    values.push(None); // missing
    values
}

#[test]
fn an_odd_field_in_the_middle_of_a_long_list_is_one_unreadable_comment_worded_as_before() {
    let fields = [
        "id",
        "html_url",
        "issue_url",
        "user",
        "body",
        "created_at",
        "updated_at",
        "assets",
    ];
    let mut cases = 0;
    for field in fields {
        for value in odd_values() {
            let mut odd = forgejo(100, "ca-bot", "[CHECKPOINT] odd");
            let obj = odd.as_object_mut().unwrap();
            match &value {
                Some(v) => obj.insert(field.to_string(), v.clone()),
                None => obj.remove(field),
            };
            // 200 comments around it, the odd one in the middle.
            let items: Vec<Value> = (0..201u64)
                .map(|i| match i {
                    100 => odd.clone(),
                    i => forgejo(i, "ca-bot", &format!("[CHECKPOINT] {i}")),
                })
                .collect();
            let text = Value::Array(items.clone()).to_string();
            let streamed = decode(&text, &Filter::all()).unwrap();
            let whole = CommentList::decode(items);
            assert_eq!(streamed, whole, "`{field}` = {value:?}");
            assert_eq!(streamed.seen, 201);
            assert_eq!(
                streamed.comments.len() + streamed.unreadable.len(),
                201,
                "`{field}` = {value:?}: no element is lost"
            );
            // Every other comment is read, in order, with its body.
            let others: Vec<u64> = streamed
                .comments
                .iter()
                .filter(|c| c.id.0 != 100 && !c.html_url.ends_with("-100"))
                .map(|c| c.id.0)
                .collect();
            assert!(
                others.iter().copied().eq((0..201).filter(|&i| i != 100)),
                "`{field}` = {value:?}: every other comment is read, in order"
            );
            assert!(
                streamed
                    .comments
                    .iter()
                    .filter(|c| c.id.0 != 100 && !c.html_url.ends_with("-100"))
                    .all(|c| c.body == format!("[CHECKPOINT] {}", c.id.0))
            );
            cases += 1;
        }
    }
    assert_eq!(cases, fields.len() * odd_values().len());
}

#[test]
fn a_typed_comment_is_the_comment_the_whole_list_decoder_makes() {
    let items = vec![
        forgejo(
            1,
            "ca-bot",
            "[CHECKPOINT] a \"quoted\" \\ body\nwith lines é",
        ),
        forgejo(2, "ca-bot", ""),
        forgejo(u64::MAX, "ca-bot", "max"),
    ];
    let text = Value::Array(items.clone()).to_string();
    let streamed = decode(&text, &Filter::all()).unwrap();
    assert_eq!(streamed, CommentList::decode(items));
    assert_eq!(streamed.comments.len(), 3);
    let user = streamed.comments[0].user.as_ref().unwrap();
    assert_eq!(
        user.created.map(|t| t.to_rfc3339()).as_deref(),
        Some("2026-06-30T22:00:00+00:00")
    );
}

#[test]
fn a_truncated_list_is_an_error_wherever_it_is_cut() {
    let items: Vec<Value> = (0..20u64)
        .map(|i| forgejo(i, "ca-bot", &format!("[CHECKPOINT] {i}")))
        .collect();
    let text = Value::Array(items).to_string();
    // Cut anywhere, even between elements: never a shorter list.
    for cut in (1..text.len()).step_by(37) {
        assert!(
            matches!(decode(&text[..cut], &Filter::all()), Err(Failed::Json(_))),
            "cut at {cut}"
        );
    }
}
