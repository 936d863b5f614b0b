//! The status policy: thresholds per agent glob, and the verdict rules.

use chrono::{DateTime, Duration, Utc};
use forgestate::format::Record;
use forgestate::report::{StatusConfig, StatusPolicy, Thresholds, Verdict, status};
use forgestate::resume::ResumeMap;
use forgestate::scan::{CommentInfo, Entry};
use serde_json::json;

fn entry(record: Record, posted: DateTime<Utc>, id: u64) -> Entry {
    Entry {
        fenced: false,
        record,
        comment: CommentInfo::at(Some(id), "bot", posted),
    }
}

#[test]
fn the_most_specific_agent_glob_sets_the_thresholds() {
    let config: StatusConfig = toml::from_str(
        "warn_after_secs = 60\n\
         [agents.\"implementation-*\"]\nstalled_after_secs = 7200\n\
         [agents.\"implementation-orchestrator\"]\nwarn_after_secs = 900\n\
         [agents.\"tiny\"]\nwarn_after_secs = 9000\nstalled_after_secs = 100\n",
    )
    .unwrap();
    let policy = StatusPolicy::new(&config).unwrap();
    assert_eq!(policy.thresholds("implementation-worker"), (60, 7200));
    assert_eq!(
        policy.thresholds("implementation-orchestrator"),
        (900, 1800),
        "the exact key wins; its unset key falls back to [status], not to the glob"
    );
    assert_eq!(policy.thresholds("other"), (60, 1800));
    assert_eq!(
        policy.thresholds("tiny"),
        (100, 100),
        "warning never after stalled"
    );
    let forced = policy.force(Thresholds {
        warn_after_secs: None,
        stalled_after_secs: Some(30),
    });
    assert_eq!(forced.thresholds("implementation-worker"), (30, 30));
    let bad: StatusConfig = toml::from_str("[agents.\"[\"]\nwarn_after_secs = 1\n").unwrap();
    assert!(
        StatusPolicy::new(&bad)
            .unwrap_err()
            .contains("not a valid glob")
    );
}

#[test]
fn verdicts_follow_health_final_phases_and_age() {
    let now = Utc::now();
    let map = ResumeMap::default();
    let policy = StatusPolicy::new(&StatusConfig {
        final_resume_points: Some(vec!["phase_4_monitoring".into()]),
        ..StatusConfig::default()
    })
    .unwrap();
    let cp = |agent: &str, phase: &str| Record::checkpoint(agent, "s", phase, json!({})).unwrap();
    let health =
        |agent: &str, status: &str| Record::health(agent, "s", status, json!({}), None).unwrap();
    let old = now - Duration::minutes(45);
    let entries = vec![
        entry(cp("implementation-worker", "pr_created"), old, 1),
        entry(cp("late", "x"), now - Duration::minutes(12), 2),
        entry(cp("gone", "x"), old, 3),
        entry(health("gone", "Paused"), old, 4),
        entry(health("resumed", "Paused"), old, 5),
        entry(cp("resumed", "x"), now, 6),
    ];
    let rows = status(&entries, now, &policy, &map);
    let verdicts: Vec<(&str, Verdict)> =
        rows.iter().map(|r| (r.agent.as_str(), r.verdict)).collect();
    assert_eq!(
        verdicts,
        [
            ("late", Verdict::Warning),
            ("resumed", Verdict::Alive),
            ("gone", Verdict::Paused),
            ("implementation-worker", Verdict::Completed),
        ]
    );
    assert_eq!(rows[0].reason, "no record for 12m (warning after 10m)");
    assert_eq!(rows[2].records, 2);
    assert_eq!(rows[2].phase.as_deref(), Some("x"));
}
