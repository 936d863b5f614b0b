//! The scenario benchmark's thread: realistic record bodies, seeded straight into the fake's
//! state, and another machine's new posts.

use forgestate::format::{Record, Renderer};
use serde_json::json;

use crate::fake_forge::{CommentRow, FakeForge, OWNER, REPO};

pub const AGENTS: [&str; 10] = [
    "implementation-worker",
    "implementation-orchestrator",
    "pr-self-reviewer",
    "issue-triager",
    "test-runner",
    "docs-writer",
    "dependency-bumper",
    "release-manager",
    "security-scanner",
    "refactor-worker",
];

/// `n` realistic bodies: 50 (agent, session) pairs taking turns, mostly checkpoints through the
/// seed's implementation phases, every tenth a health record, each with its own record `Id`.
pub fn bodies(n: usize) -> Vec<String> {
    let renderer = Renderer::embedded().expect("the built-in templates");
    let phases = [
        "clone_complete",
        "subtask_1_complete",
        "subtask_2_complete",
        "all_subtasks_complete",
        "commit_complete",
        "pr_created",
    ];
    (0..n)
        .map(|i| {
            let pair = i % 50;
            let (agent, sess) = (AGENTS[pair % 10], format!("sess-{:04}", pair / 10));
            let step = i / 50;
            let record = if i % 10 == 9 {
                let metrics = json!({"cycle_count": step, "active_workers": 3,
                    "completed_issues": step / 2, "failed_issues": 0, "queue_depth": 7});
                Record::health(agent, &sess, "Active", metrics, None)
            } else {
                let data = json!({
                    "issue_number": 1000 + pair,
                    "branch_name": format!("feature/issue-{}-step-{step}", 1000 + pair),
                    "completed_subtasks": (1..=(step % 8) as u64).collect::<Vec<_>>(),
                    "working_dir": format!("/var/lib/agents/{agent}/{sess}/workspace"),
                    "commit_sha": format!("{:040x}", i * 7919),
                });
                Record::checkpoint(agent, &sess, phases[step % phases.len()], data)
            };
            renderer
                .render(&record.expect("a valid record"))
                .expect("renders")
        })
        .collect()
}

/// Puts `bodies` on issue `issue` as the bot's comments, one per second up to a minute ago.
pub fn seed(fake: &FakeForge, issue: u64, bodies: &[String]) {
    let mut s = fake.state();
    let start = s.now() - 60 - bodies.len() as i64;
    for (i, body) in bodies.iter().enumerate() {
        let id = s.next_comment_id;
        s.next_comment_id += 3;
        let at = start + i as i64;
        s.comments.push(CommentRow {
            id,
            issue,
            poster: 7,
            body: body.clone(),
            created: at,
            updated: at,
        });
    }
    if let Some(row) = s.issue_mut(issue) {
        row.comments = bodies.len() as i64;
        // Comments are never older than their issue (a cold read reads from its creation).
        row.created = row.created.min(start - 60);
    }
}

pub fn comments_url(fake: &FakeForge, issue: u64) -> String {
    format!(
        "{}/api/v1/repos/{OWNER}/{REPO}/issues/{issue}/comments",
        fake.uri()
    )
}

/// The same comments as [`bodies`], with ids of their own (another machine's new posts).
pub fn new_posts(fake: &FakeForge, issue: u64, round: usize) {
    for body in self::bodies(5 * (round + 1)).into_iter().skip(5 * round) {
        fake.add_comment(issue, "ca-bot", &body);
    }
}

pub fn thread_bytes(fake: &FakeForge, issue: u64) -> usize {
    let s = fake.state();
    s.comments
        .iter()
        .filter(|c| c.issue == issue)
        .map(|c| crate::fake_forge::views::comment_text(&s, c).len() + 1)
        .sum()
}
