//! One comment whose fields have unexpected types, in the middle of a long thread, breaks
//! nothing: a cold read (the typed decode's lenient path, issue #44) and the warm read after it
//! see every record around it, and the odd ones are listed as unreadable, each saying which
//! field is wrong; a field forgestate does not read may have any type.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, client, session};
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::json;

fn body(phase: &str) -> String {
    let record = Record::checkpoint("w", "s", phase, json!({"phase": phase})).unwrap();
    forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&record)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn odd_field_types_mid_thread_break_no_read_cold_or_warm() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let mut want = Vec::new();
    let mut odd = Vec::new();
    for i in 0..400 {
        let phase = format!("step_{i}");
        fake.add_comment(n, "ca-bot", &body(&phase));
        want.push(phase);
        if i == 200 {
            for overlay in [
                json!({"updated_at": {"when": "now"}}),
                json!({"user": {"id": "7", "login": "ca-bot"}}),
                json!({"id": -4}),
                json!({"created_at": "yesterday"}),
            ] {
                let id = fake.add_odd_comment(n, "ca-bot", &body("odd"), overlay);
                odd.push(id);
            }
            // Fields forgestate does not read, or reads leniently, of any type: still read.
            fake.add_odd_comment(
                n,
                "ca-bot",
                &body("odd_but_readable"),
                json!({"issue_url": 5, "assets": "none", "original_author": {"x": [1]}}),
            );
            want.push("odd_but_readable".into());
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let c = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    let phases = |scan: &forgestate::scan::Scan| -> Vec<String> {
        (scan.entries.iter())
            .map(|e| e.record.phase().unwrap_or_default().to_string())
            .collect()
    };

    let cold = c.list(&Filter::default(), None).await.expect("a cold read");
    assert_eq!(phases(&cold), want, "every record around the odd ones");
    let reasons: Vec<(Option<u64>, String)> = (cold.rejected.iter())
        .map(|r| (r.comment.id, r.reason.clone()))
        .collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    // Each says which field is wrong; the ids that could be read are the odd comments' own.
    for (field, id) in [
        ("updated_at", Some(odd[0])),
        ("user", Some(odd[1])),
        ("id", None),
        ("created_at", Some(odd[3])),
    ] {
        let found = reasons
            .iter()
            .find(|(_, r)| r.contains(&format!("(`{field}` is")));
        assert_eq!(found.map(|f| f.0), Some(id), "{field}: {reasons:?}");
    }

    // The next read, through the read cache, sees one more post and everything before it.
    fake.add_comment(n, "ca-bot", &body("after"));
    want.push("after".into());
    let warm = c.list(&Filter::default(), None).await.expect("a warm read");
    assert_eq!(phases(&warm), want);
    assert_eq!(warm.rejected.len(), 4);
    let resume = c.resume("w", "s").await.expect("resume").resume;
    assert_eq!(resume.phase, "after");
}

/// A cold `resume` or `latest` now answers from the summary its read has just written (the
/// thread's slots are dropped before the answer, issue #44): with odd comments in the middle of
/// a long thread and one after its newest record, each answers exactly as a read that holds the
/// whole thread (no read cache), warnings included.
#[tokio::test(flavor = "multi_thread")]
async fn a_cold_resume_through_the_summary_answers_as_the_whole_thread_does() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    for i in 0..300 {
        let agent_session = if i % 3 == 0 { "t" } else { "s" };
        let record =
            Record::checkpoint("w", agent_session, &format!("step_{i}"), json!({"i": i})).unwrap();
        let rendered = forgestate::format::Renderer::embedded()
            .unwrap()
            .render(&record)
            .unwrap();
        fake.add_comment(n, "ca-bot", &rendered);
        if i == 150 {
            fake.add_odd_comment(n, "ca-bot", &body("odd"), json!({"user": {"id": "7"}}));
            fake.add_odd_comment(n, "ca-bot", &body("odd"), json!({"created_at": 5}));
        }
    }
    // Newer than every record: an answer may be stale, and says so.
    fake.add_odd_comment(n, "ca-bot", &body("late_odd"), json!({"updated_at": []}));

    let whole = {
        let dir = tempfile::tempdir().unwrap();
        client(&fake, BOT_TOKEN, dir.path())
            .build()
            .unwrap()
            .without_read_cache()
    };
    let filter = |session: &str| Filter {
        agent: Some("w".into()),
        session: Some(session.into()),
        ..Default::default()
    };
    for session in ["s", "t"] {
        let dir = tempfile::tempdir().unwrap();
        let cold = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
        let got = cold.resume("w", session).await.expect("a cold resume");
        let want = whole.resume("w", session).await.expect("a whole resume");
        assert_eq!(got.resume.phase, want.resume.phase);
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
        assert!(
            !got.warnings.is_empty(),
            "the odd comment after the answer is warned of"
        );

        let dir = tempfile::tempdir().unwrap();
        let cold = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
        let got = cold.latest(&filter(session)).await.expect("a cold latest");
        let want = whole
            .latest(&filter(session))
            .await
            .expect("a whole latest");
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }
    let dir = tempfile::tempdir().unwrap();
    let cold = client(&fake, BOT_TOKEN, dir.path()).build().unwrap();
    let resumed = cold.resume("w", "s").await.unwrap().resume;
    assert_eq!(resumed.phase, "step_299");
}
