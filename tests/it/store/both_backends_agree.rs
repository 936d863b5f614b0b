//! One behaviour suite, run against both backends: the local store and the fake forge must give
//! the same answers to every verb, filter and edge case.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::config::{Config, Overrides};
use forgestate::format::{Kind, Record};
use forgestate::scan::{Entry, Filter};
use forgestate::store::Thread;
use serde_json::{Value, json};

/// What a verb answered, without what legitimately differs between backends (comment ids,
/// authors, URLs, times).
fn summary(e: &Entry) -> Value {
    json!({
        "kind": e.record.kind().name(),
        "agent": e.record.agent,
        "session": e.record.session,
        "phase": e.record.phase(),
        "data": e.record.data(),
        "edited": e.comment.edited,
    })
}

fn filter(agent: Option<&str>, session: Option<&str>, kind: Option<Kind>) -> Filter {
    Filter {
        agent: agent.map(Into::into),
        session: session.map(Into::into),
        kind,
        since: None,
    }
}

async fn scenario(c: &Client<AnyThread>) -> Vec<(String, Value)> {
    let mut answers = Vec::new();
    let mut note = |label: &str, v: Value| answers.push((label.to_string(), v));

    c.thread_raw().init().await.unwrap();
    let fresh = c
        .resume("implementation-worker", "s1")
        .await
        .unwrap()
        .resume;
    note(
        "fresh",
        json!([fresh.resume_point, fresh.phase, fresh.data]),
    );

    let w = "implementation-worker";
    let steps = [
        (
            w,
            "s1",
            "clone_complete",
            json!({"issue_number": 42, "branch_name": "b"}),
        ),
        (w, "s2", "subtask_1_complete", json!({"issue_number": 7})),
        (
            w,
            "s1",
            "subtask_3_complete",
            json!({"issue_number": 42, "completed_subtasks": [1, 2, 3]}),
        ),
        (
            "pr-self-reviewer",
            "s1",
            "review_posted",
            json!({"pr_number": 9}),
        ),
    ];
    let mut first = None;
    for (agent, session, phase, data) in steps {
        let posted = c
            .post(Record::checkpoint(agent, session, phase, data).unwrap())
            .await
            .unwrap();
        first.get_or_insert(posted.record);
    }
    c.post(
        Record::health(
            "orchestrator",
            "s1",
            "Active",
            json!({"queue_depth": 3}),
            None,
        )
        .unwrap(),
    )
    .await
    .unwrap();
    // A replay of the first record's Id that says something else must not count, or shadow
    // newer records: it is an `id_conflict`.
    let mut replay = first.unwrap();
    replay.payload = Record::checkpoint(w, "s1", "pr_created", json!({}))
        .unwrap()
        .payload;
    c.post(replay).await.unwrap();
    // Comments that are not records.
    c.thread_raw()
        .append("Human here: is [CHECKPOINT] clone_complete done?")
        .await
        .unwrap();
    c.thread_raw().append("[CHECKPOINT] implementation-worker\nVersion: 2.0\nPhase: x\nSession: s1\nTime: 2026-01-01T00:00:00Z\nId: broken-1\n\n```json\n{\"a\": }\n```").await.unwrap();

    let resume = c.resume(w, "s1").await.unwrap().resume;
    note(
        "resume s1",
        json!([resume.resume_point, resume.phase, resume.data]),
    );
    let resume = c.resume(w, "s2").await.unwrap().resume;
    note(
        "resume s2",
        json!([resume.resume_point, resume.phase, resume.data]),
    );
    let resume = c.resume("pr-self-reviewer", "s1").await.unwrap().resume;
    note(
        "resume reviewer",
        json!([resume.resume_point, resume.phase]),
    );

    for (label, f) in [
        ("latest any", filter(None, None, None)),
        (
            "latest checkpoint",
            filter(None, None, Some(Kind::Checkpoint)),
        ),
        ("latest health", filter(None, None, Some(Kind::Health))),
        ("latest w s2", filter(Some(w), Some("s2"), None)),
        ("latest nobody", filter(Some("nobody"), None, None)),
    ] {
        let e = c.latest(&f).await.unwrap().record;
        note(label, e.as_ref().map(summary).unwrap_or(Value::Null));
    }
    for (label, f, limit) in [
        ("list all", filter(None, None, None), None),
        (
            "list s1 checkpoints",
            filter(None, Some("s1"), Some(Kind::Checkpoint)),
            None,
        ),
        ("list newest 2", filter(None, None, None), Some(2)),
    ] {
        let scan = c.list(&f, limit).await.unwrap();
        note(
            label,
            Value::Array(scan.entries.iter().map(summary).collect()),
        );
    }
    let future = Filter {
        since: Some(chrono::Utc::now() + chrono::Duration::hours(1)),
        ..Filter::default()
    };
    note(
        "list future",
        json!(c.list(&future, None).await.unwrap().entries.len()),
    );
    let scan = c.scan().await.unwrap();
    let codes: Vec<&str> = scan.rejected.iter().map(|r| r.code.code()).collect();
    note("rejected", json!(codes));
    answers
}

#[tokio::test(flavor = "multi_thread")]
async fn both_backends_answer_alike() {
    let dir = tempfile::tempdir().unwrap();
    let env = |k: &str| (k == "USER").then(|| "tester".to_string());
    let over = Overrides {
        store: Some(dir.path().join("local")),
        ..Overrides::default()
    };
    let config = Config::load_with(over, &env, dir.path()).unwrap();
    // The local store twice: as the CLI builds it from its configuration, and through the
    // front door; they must agree with each other and with the forge.
    let local = scenario(&Client::from_config(&config).unwrap()).await;
    let front_door = Client::local_as(dir.path().join("local-front-door"), "tester").unwrap();
    assert_eq!(
        scenario(&front_door).await,
        local,
        "Config and Client::local"
    );

    let fake = FakeForge::start().await;
    let forge = fake_forge::client(&fake, BOT_TOKEN, dir.path())
        .build()
        .unwrap();
    let forge = scenario(&forge).await;

    assert_eq!(local.len(), forge.len());
    for ((label, l), (_, f)) in local.iter().zip(&forge) {
        assert_eq!(l, f, "{label}: local and forge disagree");
    }
    let get = |label: &str| {
        local
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(get("fresh"), json!(["start", "fresh_start", {}]));
    assert_eq!(get("resume s1")[0], "phase_2_continue");
    assert_eq!(
        get("resume s1")[1],
        "subtask_3_complete",
        "the replayed Id did not win"
    );
    assert_eq!(
        get("resume s2"),
        json!(["phase_2_continue", "subtask_1_complete", {"issue_number": 7}])
    );
    assert_eq!(get("resume reviewer"), json!(["start", "review_posted"]));
    assert_eq!(get("latest any")["agent"], "orchestrator");
    assert_eq!(get("latest checkpoint")["agent"], "pr-self-reviewer");
    assert_eq!(get("latest w s2")["phase"], "subtask_1_complete");
    assert_eq!(get("latest nobody"), Value::Null);
    assert_eq!(get("list all").as_array().unwrap().len(), 5);
    assert_eq!(get("list s1 checkpoints").as_array().unwrap().len(), 3);
    assert_eq!(get("list newest 2").as_array().unwrap().len(), 2);
    assert_eq!(get("list newest 2")[1]["agent"], "orchestrator");
    assert_eq!(get("list future"), json!(0));
    assert_eq!(
        get("rejected"),
        json!(["id_conflict", "no_marker", "bad_json"])
    );
}

/// The same scenario with the read cache on (the default) and off, on both backends: the cache
/// changes no answer.
#[tokio::test(flavor = "multi_thread")]
async fn the_read_cache_changes_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let local_on = Client::local_as(dir.path().join("on"), "tester").unwrap();
    let local_off = Client::local_as(dir.path().join("off"), "tester")
        .unwrap()
        .without_read_cache();
    let on = scenario(&local_on).await;
    assert_eq!(scenario(&local_off).await, on, "local store, cache off");
    assert!(local_on.read_cache_path().is_some_and(|p| p.exists()));

    for cached in [true, false] {
        let fake = FakeForge::start().await;
        let forge_dir = dir.path().join(format!("forge-{cached}"));
        let mut forge = fake_forge::client(&fake, BOT_TOKEN, &forge_dir)
            .read_cache(forgestate::mirror::ReadCache::default())
            .build()
            .unwrap();
        if !cached {
            forge = forge.without_read_cache();
        }
        let answers = scenario(&forge).await;
        for ((label, l), (_, f)) in on.iter().zip(&answers) {
            assert_eq!(l, f, "{label}: forge with the cache {cached} disagrees");
        }
        assert_eq!(forge.read_cache_path().is_some_and(|p| p.exists()), cached);
    }
}
