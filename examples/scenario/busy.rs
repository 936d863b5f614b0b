//! The busy-repository run of the scenario benchmark (`--busy N`, issue #30): the head holds
//! `--busy-head` (1,000) records, and another account wrote N comments on another issue since
//! the head was created. A cold `resume` is measured against a bare `curl` of the head's own
//! comments (the thread's bytes), and the repository-wide list since the head's creation (what
//! a cold read downloaded before it sized its lists) is shown beside them.

use std::path::Path;
use std::time::Duration;

use crate::fake_forge::{CommentRow, FakeForge, OWNER, REPO, session};
use crate::row;
use crate::run::{curl, measure, median};
use crate::thread::{AGENTS, bodies, comments_url, seed, thread_bytes};

/// What people write on another issue: a paragraph of about 1 KB each.
fn foreign_body(i: usize) -> String {
    format!(
        "Comment {i} on the release plan. {}",
        "We should cut the branch after the migration lands and the docs are reviewed. ".repeat(12)
    )
}

/// The busy case's figures, for issue #44's table.
pub struct Busy {
    pub cold_secs: f64,
    pub bare_secs: f64,
    pub requests: usize,
}

pub async fn busy(bin: &Path, head: usize, foreign: usize, latency: Duration, runs: usize) -> Busy {
    let fake = FakeForge::start().await;
    let issue = session(&fake);
    seed(&fake, issue, &bodies(head));
    let other = fake.add_issue("Release planning", &[], false);
    {
        let mut s = fake.state();
        // After the head was created (the seed makes it at least a minute older than now).
        let start = s.now() - 30;
        for i in 0..foreign {
            let id = s.next_comment_id;
            s.next_comment_id += 1;
            s.comments.push(CommentRow {
                id,
                issue: other,
                poster: 9, // mallory: another account
                body: foreign_body(i),
                created: start,
                updated: start,
            });
        }
        if let Some(row) = s.issue_mut(other) {
            row.comments = foreign as i64;
            row.updated = start;
        }
    }
    fake.state().latency = latency;
    let work = tempfile::tempdir().expect("a temporary directory");
    let args = [
        "resume",
        "--agent",
        AGENTS[0],
        "--session",
        "sess-0000",
        "--json",
    ];
    println!(
        "\n## busy repository: {head} records on the head ({:.1} MB), {foreign} comments by \
         another account on another issue since, medians of {runs} whole-process runs\n",
        thread_bytes(&fake, issue) as f64 / 1e6
    );
    let mut all = Vec::new();
    for k in 0..runs {
        let cold = work.path().join(format!("busy-cold-{k}"));
        std::fs::create_dir_all(&cold).expect("a work directory");
        all.push(measure(&fake, bin, &args, &cold).await);
    }
    let cold = median(all);
    let url = comments_url(&fake, issue);
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(curl(&fake, &url, work.path()).await);
    }
    let bare = median(all);
    let opened = fake.state().issue_mut(issue).map_or(0, |row| row.created) - 600;
    let since = chrono::DateTime::from_timestamp(opened, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let wide_url = format!(
        "{}/api/v1/repos/{OWNER}/{REPO}/issues/comments?since={since}",
        fake.uri()
    );
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(curl(&fake, &wide_url, work.path()).await);
    }
    let wide = median(all);
    println!("| operation                          | requests |  wall (s) | RSS (MB) |");
    println!("|------------------------------------|---------:|----------:|---------:|");
    row("resume, cold (no cache)", &cold);
    row("curl of the head's own comments", &bare);
    row("curl of the repository-wide list", &wide);
    let secs = |r: &crate::run::Run| r.wall.as_secs_f64();
    println!();
    println!("| figure | forgestate | floor / peer | ratio | target |");
    println!("|---|---|---|---|---|");
    println!(
        "| cold resume, busy repository | {} requests, {:.3} s | bare GET of the head's own comments: {:.3} s | {:.2}× | ≤ 1.5× |",
        cold.requests,
        secs(&cold),
        secs(&bare),
        secs(&cold) / secs(&bare).max(1e-9)
    );
    Busy {
        cold_secs: secs(&cold),
        bare_secs: secs(&bare),
        requests: cold.requests,
    }
}
