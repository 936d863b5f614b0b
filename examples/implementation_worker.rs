//! An implementation worker that survives being killed: seed 003's "Complete Implementation with
//! Checkpoints" flow (clone, subtasks with a checkpoint after each, commit, pull request), with
//! every step simulated (no git, no network besides the store).
//!
//! Each run first asks where to resume, then does only what is left, so a worker killed at any
//! point and started again never redoes a finished step. It prints one line per step it does
//! (`[DO] ...`) or skips (`[SKIP] ...`), and one per checkpoint it saves.
//!
//! ```text
//! cargo run --example implementation_worker -- --store /tmp/demo --crash-after 3
//! cargo run --example implementation_worker -- --store /tmp/demo
//! ```
//!
//! Options:
//! - `--store DIR`: the local store in DIR. Without it, the store configured for the CLI
//!   (`Client::from_config`: a forge when `FORGESTATE_URL` or a configuration file names one,
//!   else the default local store).
//! - `--session S` (default `demo-session`), `--issue N` (default 42), `--subtasks N` (default 4).
//! - `--crash-after N`: exit abruptly (code 137, no clean-up) right after this run's Nth
//!   checkpoint, as a killed worker would.
//! - `--crash-in-pr`: exit abruptly right after opening the pull request, before the checkpoint
//!   that records it: the crash a write-ahead intent is for.
//! - `--prs FILE` (default `forgestate-demo/SESSION/pull_requests.log` in the system's temporary
//!   directory, never the working directory): the simulated forge's pull requests, one line each
//!   (`#142 issue-42-work`). Opening one appends a line.
//!
//! The pull request is the one step that is not safe to repeat, so the worker checkpoints an
//! intent (`create_pr`, with the branch) before opening it. A run that finds that intent still
//! pending (`resume`'s `pending_intent`) checks the world first: a pull request for the branch
//! that already exists is adopted, never opened again.

use std::process::ExitCode;

use serde_json::{Value, json};

use forgestate::backend::AnyThread;
use forgestate::config::{Config, Overrides};
use forgestate::format::Record;
use forgestate::{Client, Outcome};

const AGENT: &str = "implementation-worker";

/// The steps of the flow, in order; a resume point names the first one still to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Clone,
    Subtasks,
    Commit,
    PullRequest,
    Done,
}

impl Stage {
    /// The resume points of the built-in resume map (`config/forgestate.toml`).
    fn from_resume_point(point: &str) -> Stage {
        match point {
            "phase_2_subtasks" | "phase_2_continue" => Stage::Subtasks,
            "phase_3_commit" => Stage::Commit,
            "phase_4_pr" => Stage::PullRequest,
            "phase_4_monitoring" => Stage::Done,
            // "start", and anything unknown: from the beginning.
            _ => Stage::Clone,
        }
    }
}

struct Options {
    store: Option<String>,
    session: String,
    issue: u64,
    subtasks: u64,
    crash_after: Option<u64>,
    crash_in_pr: bool,
    prs: String,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        store: None,
        session: "demo-session".to_string(),
        issue: 42,
        subtasks: 4,
        crash_after: None,
        crash_in_pr: false,
        prs: String::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: {v:?} is not a number"))
        };
        match flag.as_str() {
            "--store" => o.store = Some(value()?),
            "--session" => o.session = value()?,
            "--issue" => o.issue = number(value()?)?,
            "--subtasks" => o.subtasks = number(value()?)?,
            "--crash-after" => o.crash_after = Some(number(value()?)?),
            "--crash-in-pr" => o.crash_in_pr = true,
            "--prs" => o.prs = value()?,
            other => return Err(format!("unknown option {other}; see the top of the file")),
        }
    }
    if o.prs.is_empty() {
        // Out of the working directory, so a demo run leaves nothing in a checkout.
        let dir = std::env::temp_dir()
            .join("forgestate-demo")
            .join(&o.session);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}; pass --prs FILE", dir.display()))?;
        o.prs = dir.join("pull_requests.log").display().to_string();
    }
    Ok(o)
}

/// The worker's state: what a checkpoint carries, and what a resumed run restores.
struct Worker {
    client: Client<AnyThread>,
    session: String,
    crash_after: Option<u64>,
    saved: u64,
    state: serde_json::Map<String, Value>,
}

impl Worker {
    /// Saves a checkpoint of the whole state at `phase`; exits abruptly when told to crash here.
    async fn checkpoint(&mut self, phase: &str) -> Result<(), String> {
        self.checkpoint_intent(phase, None).await
    }

    /// [`Worker::checkpoint`], recording `intent` (a name and its data) before a side effect.
    async fn checkpoint_intent(
        &mut self,
        phase: &str,
        intent: Option<(&str, Value)>,
    ) -> Result<(), String> {
        let mut record = Record::checkpoint(
            AGENT,
            &self.session,
            phase,
            Value::Object(self.state.clone()),
        )
        .map_err(|e| e.to_string())?;
        if let Some((name, data)) = intent {
            record = record.with_intent(name, data).map_err(|e| e.to_string())?;
            println!("intent: {name}");
        }
        match self.client.save(record).await {
            Outcome::Posted(p) => println!("checkpoint: {phase} (comment {})", p.comment_id),
            // Safe on this machine; the next command posts it, and resume reads it meanwhile.
            Outcome::Spooled { path, cause, .. } => println!(
                "checkpoint: {phase} (kept in the outbox, {}: {cause})",
                path.display()
            ),
            Outcome::Failed(e) => return Err(format!("cannot save {phase}: {e}")),
        }
        self.saved += 1;
        if self.crash_after == Some(self.saved) {
            eprintln!(
                "implementation_worker: crashing after {} checkpoint(s)",
                self.saved
            );
            std::process::exit(137);
        }
        Ok(())
    }

    fn set(&mut self, key: &str, value: Value) {
        self.state.insert(key.to_string(), value);
    }
}

async fn run(o: Options) -> Result<(), String> {
    let client = match &o.store {
        Some(dir) => Client::local(dir),
        None => Config::load(Overrides::default()).and_then(|c| Client::from_config(&c)),
    }
    .map_err(|e| e.to_string())?;

    // Check for resume.
    let resumed = client
        .resume(AGENT, &o.session)
        .await
        .map_err(|e| e.to_string())?;
    for warning in &resumed.warnings {
        eprintln!("implementation_worker: warning: {warning}");
    }
    let pending = resumed.session.pending_intent.clone();
    let resume = resumed.resume;
    println!("resume: {} -> {}", resume.phase, resume.resume_point);
    let stage = Stage::from_resume_point(&resume.resume_point);
    let restored = resume.implementation_state(None);
    let mut w = Worker {
        client,
        session: o.session.clone(),
        crash_after: o.crash_after,
        saved: 0,
        state: resume.data.as_object().cloned().unwrap_or_default(),
    };

    if stage <= Stage::Clone {
        // Fresh start: clone and branch.
        let working_dir = format!("/tmp/forgestate-demo/{}", o.session);
        let branch = format!("issue-{}-work", o.issue);
        println!("[DO] clone into {working_dir}, branch {branch}");
        w.set("issue_number", json!(o.issue));
        w.set("working_dir", json!(working_dir));
        w.set("branch_name", json!(branch));
        w.set("completed_subtasks", json!([]));
        w.checkpoint("clone_complete").await?;
    } else {
        println!(
            "[SKIP] clone: restored {} on branch {}",
            restored.working_dir.as_deref().unwrap_or("?"),
            restored.branch_name.as_deref().unwrap_or("?")
        );
    }

    if stage <= Stage::Subtasks {
        let mut completed: Vec<u64> = restored
            .completed_subtasks
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        for i in 1..=o.subtasks {
            if completed.contains(&i) {
                println!("[SKIP] subtask {i} already completed");
                continue;
            }
            println!("[DO] subtask {i}");
            completed.push(i);
            w.set("completed_subtasks", json!(completed));
            w.checkpoint(&format!("subtask_{i}_complete")).await?;
        }
        // The resume map sends this phase straight to the commit.
        w.checkpoint("all_subtasks_complete").await?;
    } else {
        println!("[SKIP] subtasks: all {} completed", o.subtasks);
    }

    if stage <= Stage::Commit {
        let sha = format!("c0ffee{:04x}", o.issue);
        println!("[DO] commit {sha}");
        w.set("commit_sha", json!(sha));
        w.checkpoint("commit_complete").await?;
    } else {
        println!("[SKIP] commit already made");
    }

    if stage <= Stage::PullRequest {
        let branch = w
            .state
            .get("branch_name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        // An earlier run may have opened it and died before saying so: look before opening.
        let intended = pending.as_ref().is_some_and(|i| i.name == "create_pr");
        let existing = match intended {
            true => pull_request_for(&o.prs, &branch)?,
            false => None,
        };
        let pr = match existing {
            Some(pr) => {
                println!("[SKIP] pull request #{pr} exists (intent create_pr was pending)");
                pr
            }
            None => {
                if !intended {
                    let intent = ("create_pr", json!({ "branch": branch }));
                    w.checkpoint_intent("commit_complete", Some(intent)).await?;
                }
                let pr = o.issue + 100;
                println!("[DO] open pull request #{pr}");
                open_pull_request(&o.prs, pr, &branch)?;
                if o.crash_in_pr {
                    eprintln!("implementation_worker: crashing before recording the pull request");
                    std::process::exit(137);
                }
                pr
            }
        };
        w.set("pr_number", json!(pr));
        // Any later checkpoint confirms the intent.
        w.checkpoint("pr_created").await?;
    } else {
        println!("[SKIP] pull request already open");
    }

    let pr = w.state.get("pr_number").and_then(Value::as_u64);
    println!(
        "done: pull request #{} is open; nothing left to do",
        pr.unwrap_or_default()
    );
    Ok(())
}

/// The simulated forge's pull request for `branch`, if one is open.
fn pull_request_for(prs: &str, branch: &str) -> Result<Option<u64>, String> {
    let text = match std::fs::read_to_string(prs) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {prs}: {e}")),
    };
    Ok(text.lines().find_map(|line| {
        let (number, on) = line.strip_prefix('#')?.split_once(' ')?;
        (on == branch).then(|| number.parse().ok()).flatten()
    }))
}

/// Opens a pull request on the simulated forge: one line appended to `prs`.
fn open_pull_request(prs: &str, pr: u64, branch: &str) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(prs)
        .and_then(|mut f| writeln!(f, "#{pr} {branch}"))
        .map_err(|e| format!("cannot open the pull request in {prs}: {e}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let options = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("implementation_worker: error: {e}");
            return ExitCode::from(64);
        }
    };
    match run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("implementation_worker: error: {e}");
            ExitCode::from(1)
        }
    }
}
