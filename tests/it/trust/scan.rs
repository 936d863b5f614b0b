//! Reading a thread: trust, dedupe by record id, thread order over client clocks.

use std::collections::BTreeSet;

use chrono::{Duration, Utc};
use forgestate::format::{Record, Renderer, parse_time};
use forgestate::scan::{Filter, Rejection, Trust, scan};
use forgestate::store::{Comment, Listing};
use serde_json::json;

fn comment(id: u64, author: &str, body: String) -> Comment {
    let t = Utc::now();
    Comment {
        id,
        author: author.into(),
        created_at: t,
        updated_at: t,
        url: None,
        body,
    }
}

fn body(record: &Record) -> String {
    Renderer::embedded().unwrap().render(record).unwrap()
}

fn cp(phase: &str) -> Record {
    Record::checkpoint("w", "s", phase, json!({"phase": phase})).unwrap()
}

#[test]
fn latest_is_thread_order_not_client_clock() {
    let mut early = cp("second-posted");
    early.time = parse_time("2020-01-01T00:00:00Z").unwrap(); // a worker with a slow clock
    let listing = Listing {
        comments: vec![
            comment(20, "bot", body(&early)),
            comment(10, "bot", body(&cp("first-posted"))),
        ],
        warnings: vec![],
        rejects: vec![],
        incomplete: false,
    };
    let s = scan(listing, &Trust::Everyone);
    let phases: Vec<_> = s
        .entries
        .iter()
        .map(|e| e.record.phase().unwrap())
        .collect();
    assert_eq!(
        phases,
        ["first-posted", "second-posted"],
        "sorted by comment id"
    );
}

#[test]
fn first_of_a_duplicated_id_wins() {
    let original = cp("original");
    let mut replay = original.clone();
    replay.payload = cp("replayed").payload;
    let listing = Listing {
        comments: vec![
            comment(1, "bot", body(&original)),
            comment(2, "bot", body(&original)),
            comment(3, "bot", body(&replay)),
        ],
        warnings: vec!["w".into()],
        rejects: vec![],
        incomplete: false,
    };
    let s = scan(listing, &Trust::Everyone);
    assert_eq!(s.entries.len(), 1);
    assert_eq!(s.entries[0].record.phase(), Some("original"));
    // An exact copy (the outbox posting a record twice) is a silent duplicate.
    assert_eq!(
        s.rejected[0].code,
        Rejection::Duplicate {
            record_id: original.id.clone().unwrap(),
            first_comment: 1
        }
    );
    // A copy that says something else is a conflict, warned of naming both comments.
    assert_eq!(
        s.rejected[1].code,
        Rejection::Conflict {
            record_id: original.id.clone().unwrap(),
            first_comment: 1
        }
    );
    assert_eq!(s.rejected[1].code.code(), "id_conflict");
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    assert_eq!(s.warnings[0], "w");
    assert!(
        s.warnings[1].starts_with("comment 1 and comment 3 (checkpoint w) both hold record "),
        "{}",
        s.warnings[1]
    );
}

/// A carried copy (`Carried-From:`, `Posted-At:`, `Edited-At:` lines added) says what its
/// original says: a duplicate, not a conflict.
#[test]
fn a_carried_copy_is_a_duplicate_not_a_conflict() {
    let original = cp("original");
    let mut carried = original.clone();
    carried.carried_from = Some(4);
    carried.posted_at = Some(parse_time("2026-01-01T00:00:00Z").unwrap());
    carried.edited_at = Some(parse_time("2026-01-01T00:30:00Z").unwrap());
    let listing = Listing {
        comments: vec![
            comment(1, "bot", body(&original)),
            comment(2, "bot", body(&carried)),
        ],
        warnings: vec![],
        rejects: vec![],
        incomplete: false,
    };
    let s = scan(listing, &Trust::Everyone);
    assert_eq!(s.rejected.len(), 1);
    assert_eq!(s.rejected[0].code.code(), "duplicate");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn untrusted_authors_never_count_even_when_newer() {
    let trust = Trust::Only(BTreeSet::from(["bot".to_string()]));
    let mut forged = cp("pr_created");
    forged.id = Some("ffffffff-ffff-7fff-bfff-ffffffffffff".into());
    let listing = Listing {
        comments: vec![
            comment(1, "bot", body(&cp("clone_complete"))),
            comment(2, "mallory", body(&forged)),
            comment(3, "mallory", "I think this is stuck".into()),
        ],
        warnings: vec![],
        rejects: vec![],
        incomplete: false,
    };
    let s = scan(listing, &trust);
    assert_eq!(s.entries.len(), 1);
    assert_eq!(s.entries[0].record.phase(), Some("clone_complete"));
    assert_eq!(
        s.rejected[0].code,
        Rejection::Untrusted {
            author: "mallory".into()
        }
    );
    assert!(s.rejected[0].reason.contains("mallory"));
    assert_eq!(s.rejected[1].code.code(), "no_marker");
}

#[test]
fn edited_comments_are_still_read_and_marked() {
    let mut c = comment(1, "bot", body(&cp("p")));
    c.updated_at = c.created_at + Duration::seconds(30);
    let s = scan(
        Listing {
            comments: vec![c],
            warnings: vec![],
            rejects: vec![],
            incomplete: false,
        },
        &Trust::Everyone,
    );
    assert!(s.entries[0].comment.edited);
    let v = serde_json::to_value(&s.entries[0]).unwrap();
    assert_eq!(v["comment"]["edited"], true);
    assert_eq!(v["phase"], "p");
}

#[test]
fn filter_matches_each_field() {
    let s = scan(
        Listing {
            comments: vec![comment(1, "bot", body(&cp("p")))],
            warnings: vec![],
            rejects: vec![],
            incomplete: false,
        },
        &Trust::Everyone,
    );
    let e = &s.entries[0];
    assert!(Filter::default().matches(e));
    assert!(
        Filter {
            agent: Some("w".into()),
            session: Some("s".into()),
            ..Filter::default()
        }
        .matches(e)
    );
    assert!(
        !Filter {
            agent: Some("x".into()),
            ..Filter::default()
        }
        .matches(e)
    );
    assert!(
        !Filter {
            session: Some("x".into()),
            ..Filter::default()
        }
        .matches(e)
    );
    assert!(
        !Filter {
            kind: Some(forgestate::format::Kind::Health),
            ..Filter::default()
        }
        .matches(e)
    );
    let later = Utc::now() + Duration::seconds(5);
    assert!(
        !Filter {
            since: Some(later),
            ..Filter::default()
        }
        .matches(e)
    );
}
