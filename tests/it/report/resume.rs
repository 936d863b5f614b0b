//! The resume map (most specific key wins, the seed's map by default) and the resume answer:
//! the typed implementation state and the "did you mean" of a fresh start.

use forgestate::config::{ConfigFile, DEFAULTS};
use forgestate::resume::{
    ImplementationState, Resume, ResumeConfig, ResumeMap, did_you_mean, edit_distance,
};
use serde_json::json;

#[test]
fn the_default_map_is_the_seeds_with_every_subtask() {
    let map = ResumeMap::default();
    let w = "implementation-worker";
    assert_eq!(map.point(w, "clone_complete"), "phase_2_subtasks");
    assert_eq!(map.point(w, "subtask_1_complete"), "phase_2_continue");
    assert_eq!(map.point(w, "subtask_3_complete"), "phase_2_continue");
    assert_eq!(map.point(w, "all_subtasks_complete"), "phase_3_commit");
    assert_eq!(map.point(w, "commit_complete"), "phase_4_pr");
    assert_eq!(map.point(w, "pr_created"), "phase_4_monitoring");
    assert_eq!(map.point(w, "something_else"), "start");
    assert_eq!(map.default_point(), "start");
}

fn map(toml_text: &str) -> ResumeMap {
    ResumeMap::new(&toml::from_str::<ResumeConfig>(toml_text).unwrap()).unwrap()
}

#[test]
fn seed_map_with_globs() {
    let cfg = ConfigFile::parse(DEFAULTS, "defaults").unwrap();
    let m = ResumeMap::new(&cfg.resume).unwrap();
    let w = "implementation-worker";
    assert_eq!(m.point(w, "clone_complete"), "phase_2_subtasks");
    for n in [1, 2, 3, 17, 250] {
        assert_eq!(
            m.point(w, &format!("subtask_{n}_complete")),
            "phase_2_continue"
        );
    }
    assert_eq!(m.point(w, "all_subtasks_complete"), "phase_3_commit");
    assert_eq!(m.point(w, "commit_complete"), "phase_4_pr");
    assert_eq!(m.point(w, "pr_created"), "phase_4_monitoring");
    assert_eq!(m.point(w, "mystery"), "start");
    assert_eq!(
        m.point("pr-self-reviewer", "clone_complete"),
        "start",
        "maps are per agent"
    );
}

#[test]
fn most_specific_key_wins() {
    let m = map(r#"
        default = "begin"
        [agents."worker-*"]
        "*" = "any"
        "subtask_*" = "sub"
        "subtask_*_complete" = "sub_done"
        "subtask_9_complete" = "nine"
        [agents."worker-special"]
        "*" = "special"
    "#);
    assert_eq!(m.point("worker-1", "subtask_9_complete"), "nine");
    assert_eq!(m.point("worker-1", "subtask_8_complete"), "sub_done");
    assert_eq!(m.point("worker-1", "subtask_8_started"), "sub");
    assert_eq!(m.point("worker-1", "other"), "any");
    assert_eq!(m.point("worker-special", "subtask_9_complete"), "special");
    assert_eq!(m.point("reviewer", "x"), "begin");
    assert_eq!(
        m.mapped("reviewer", "x"),
        None,
        "unmapped: the default applies"
    );
    assert_eq!(m.mapped("worker-1", "other"), Some("any"));
    assert_eq!(m.default_point(), "begin");
    assert!(
        ResumeMap::new(
            &toml::from_str(
                r#"[agents."a["]
x = "y""#
            )
            .unwrap()
        )
        .is_err()
    );
}

#[test]
fn implementation_state_is_lenient_and_typed() {
    let m = map("");
    let mut r = Resume::from_checkpoint(&m, None);
    assert_eq!(r.implementation_state(None), ImplementationState::default());
    r.data = json!({"issue_number": 42, "branch_name": "b", "completed_subtasks": [1, 2],
                    "pr_number": "not a number", "working_dir": "/saved"});
    let s = r.implementation_state(None);
    assert_eq!(s.issue_number, Some(42));
    assert_eq!(s.branch_name.as_deref(), Some("b"));
    assert_eq!(s.completed_subtasks, vec![json!(1), json!(2)]);
    assert_eq!(s.pr_number, None);
    assert_eq!(s.working_dir.as_deref(), Some("/saved"));
    assert_eq!(
        r.implementation_state(Some("/here")).working_dir.as_deref(),
        Some("/here")
    );
}

#[test]
fn did_you_mean_names_the_closest_sessions_and_agents() {
    let names: std::collections::BTreeSet<(String, String)> = [
        ("implementation-worker", "demo-1"),
        ("implementation-worker", "prod"),
        ("implementation-worker", "demo"),
        ("reviewer", "demo"),
        ("other", "elsewhere"),
    ]
    .into_iter()
    .map(|(a, s)| (a.to_string(), s.to_string()))
    .collect();
    let line = did_you_mean("implementation-worker", "dem", &names).unwrap();
    assert_eq!(
        line,
        "no checkpoint of agent \"implementation-worker\" in session \"dem\", so this is a fresh \
         start; did you mean session \"demo\" or \"demo-1\" or \"prod\"?"
    );
    let line = did_you_mean("implementaton-worker", "demo", &names).unwrap();
    assert!(
        line.ends_with("did you mean agent \"implementation-worker\" or \"reviewer\"?"),
        "{line}"
    );
    assert_eq!(did_you_mean("nobody", "nowhere", &names), None);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("démo", "demo"), 1);
}
