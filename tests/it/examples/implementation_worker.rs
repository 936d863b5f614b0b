//! `examples/implementation_worker.rs` survives being killed: crashed right after any of its
//! checkpoints and started again, it resumes at the next step and redoes nothing, on the local
//! store and on a forge.

use crate::fake_forge;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fake_forge::outbox::phases;
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::Client;
use forgestate::scan::Filter;

/// Subtasks per run (the example's default).
const SUBTASKS: u64 = 4;

/// Every checkpoint a complete run saves, in order.
fn all_phases() -> Vec<String> {
    let mut p = vec!["clone_complete".to_string()];
    p.extend((1..=SUBTASKS).map(|i| format!("subtask_{i}_complete")));
    // The second `commit_complete` carries the `create_pr` intent, saved before the PR opens.
    p.extend(
        [
            "all_subtasks_complete",
            "commit_complete",
            "commit_complete",
            "pr_created",
        ]
        .map(String::from),
    );
    p
}

/// Every step a complete run does, in order, as it prints them.
fn all_steps() -> Vec<String> {
    let mut s = vec!["[DO] clone".to_string()];
    s.extend((1..=SUBTASKS).map(|i| format!("[DO] subtask {i}")));
    s.extend(["[DO] commit", "[DO] open pull request"].map(String::from));
    s
}

/// The example's executable. Examples have no `CARGO_BIN_EXE_*`, but `cargo test` builds every
/// example beside the test binary's own directory (`target/debug/examples/`), before any test runs.
fn example() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps");
    let path = dir.join("examples").join(format!(
        "implementation_worker{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(
        path.is_file(),
        "{} is missing: run `cargo test` (which builds the examples), or \
         `cargo build --example implementation_worker` first",
        path.display()
    );
    path
}

/// Runs the example in `cwd` with only `env` (plus HOME and USER) set, its simulated pull
/// requests in `cwd` (see [`pull_requests`]).
fn worker(cwd: &Path, env: &[(&str, String)], args: &[&str]) -> Output {
    Command::new(example())
        .args(args)
        .arg("--prs")
        .arg(cwd.join(PRS))
        .current_dir(cwd)
        .env_clear()
        .env("HOME", cwd)
        .env("USER", "tester")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run the example")
}

/// The steps a run did (its `[DO]` lines, without their details).
fn steps(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("[DO]"))
        .map(|l| {
            all_steps()
                .into_iter()
                .find(|s| l == s || l.starts_with(&format!("{s} ")))
                .unwrap_or_else(|| l.to_string())
        })
        .collect()
}

fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Crashes a run after its `k`th checkpoint, starts it again, and checks the two runs together
/// did every step exactly once, in order, and the second one started where the first stopped.
/// `phases_now` reads the thread's checkpoint phases.
fn crash_and_resume(
    cwd: &Path,
    env: &[(&str, String)],
    base: &[&str],
    k: usize,
    phases_now: &dyn Fn() -> Vec<String>,
) {
    let crash = k.to_string();
    let mut args = base.to_vec();
    args.extend(["--crash-after", &crash]);
    let first = worker(cwd, env, &args);
    assert_eq!(
        first.status.code(),
        Some(137),
        "crash after {k}: {}",
        text(&first)
    );
    let saved = phases_now();
    assert_eq!(saved, all_phases()[..k], "crash after {k}");

    let second = worker(cwd, env, base);
    assert!(
        second.status.success(),
        "resume after {k}: {}",
        text(&second)
    );
    let resumed_from = format!("resume: {} -> ", all_phases()[k - 1]);
    assert!(
        String::from_utf8_lossy(&second.stdout).starts_with(&resumed_from),
        "after {k}: {}",
        text(&second)
    );
    let mut done = steps(&first);
    done.extend(steps(&second));
    assert_eq!(
        done,
        all_steps(),
        "crash after {k}: each step once, in order"
    );
    assert_eq!(
        phases_now(),
        all_phases(),
        "crash after {k}: each checkpoint once"
    );
    assert!(String::from_utf8_lossy(&second.stdout).contains("done: pull request #142 is open"));

    // A third run finds everything done and does nothing.
    let third = worker(cwd, env, base);
    assert!(third.status.success(), "{}", text(&third));
    assert!(steps(&third).is_empty(), "{}", text(&third));
    assert_eq!(phases_now(), all_phases());
    assert_eq!(
        pull_requests(cwd),
        ["#142 issue-42-work"],
        "the PR was opened once"
    );
}

/// Where [`worker`] has the example keep its simulated pull requests, in `cwd`.
const PRS: &str = "pull_requests.log";

/// The simulated forge's pull requests (the example's `--prs` file in `cwd`).
fn pull_requests(cwd: &Path) -> Vec<String> {
    std::fs::read_to_string(cwd.join(PRS))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Killed after opening the pull request and before recording it: the next run finds the
/// `create_pr` intent pending, sees the pull request exists, and adopts it.
fn crash_between_intent_and_confirmation(
    cwd: &Path,
    env: &[(&str, String)],
    base: &[&str],
    phases_now: &dyn Fn() -> Vec<String>,
) {
    let mut args = base.to_vec();
    args.push("--crash-in-pr");
    let first = worker(cwd, env, &args);
    assert_eq!(first.status.code(), Some(137), "{}", text(&first));
    assert_eq!(pull_requests(cwd), ["#142 issue-42-work"]);
    let all = all_phases();
    assert_eq!(
        phases_now(),
        all[..all.len() - 1],
        "the intent is the last record"
    );
    let second = worker(cwd, env, base);
    assert!(second.status.success(), "{}", text(&second));
    let out = String::from_utf8_lossy(&second.stdout);
    assert!(
        out.contains("[SKIP] pull request #142 exists (intent create_pr was pending)"),
        "{}",
        text(&second)
    );
    assert!(steps(&second).is_empty(), "{}", text(&second));
    assert_eq!(
        pull_requests(cwd),
        ["#142 issue-42-work"],
        "created exactly once"
    );
    assert_eq!(phases_now(), all);
    let third = worker(cwd, env, base);
    assert!(steps(&third).is_empty(), "{}", text(&third));
    assert_eq!(pull_requests(cwd), ["#142 issue-42-work"]);
}

#[test]
fn killed_between_the_pr_intent_and_its_confirmation_the_pr_is_created_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let store_arg = store.display().to_string();
    crash_between_intent_and_confirmation(dir.path(), &[], &["--store", &store_arg], &|| {
        local_phases(&store)
    });
}

/// The checkpoint phases in a local store, in thread order.
fn local_phases(dir: &Path) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = Client::local_as(dir, "tester").unwrap();
        let scan = client.list(&Filter::default(), None).await.unwrap();
        scan.entries
            .iter()
            .map(|e| e.record.phase().unwrap_or_default().to_string())
            .collect()
    })
}

#[test]
fn killed_after_any_checkpoint_on_the_local_store_it_resumes_without_redoing_a_step() {
    for k in 1..=all_phases().len() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let store_arg = store.display().to_string();
        crash_and_resume(dir.path(), &[], &["--store", &store_arg], k, &|| {
            local_phases(&store)
        });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_partway_on_a_forge_it_resumes_without_redoing_a_step() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let env = [
        ("FORGESTATE_URL", fake.uri()),
        ("FORGESTATE_OWNER", OWNER.to_string()),
        ("FORGESTATE_REPO", REPO.to_string()),
        ("FORGESTATE_TOKEN", BOT_TOKEN.to_string()),
        ("XDG_CACHE_HOME", d.join("cache").display().to_string()),
        ("XDG_STATE_HOME", d.join("state").display().to_string()),
    ];
    // Crash in the middle of the subtasks: the example reads its state back from the issue.
    let phases_now = || phases(&fake, n);
    tokio::task::block_in_place(|| crash_and_resume(d, &env, &[], 3, &phases_now));
    // Then a second session, killed between the pull request's intent and its confirmation.
    let other = tempfile::tempdir().unwrap();
    let base = ["--session", "pr-session"];
    let session_phases = || {
        phases(&fake, n)
            .into_iter()
            .skip(all_phases().len())
            .collect::<Vec<_>>()
    };
    tokio::task::block_in_place(|| {
        crash_between_intent_and_confirmation(other.path(), &env, &base, &session_phases)
    });
    // Nothing was written to the local store by mistake.
    assert!(!d.join("state/forgestate/local").exists());
}

#[test]
fn by_default_its_simulated_pull_requests_stay_out_of_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (cwd, tmp) = (dir.path().join("checkout"), dir.path().join("tmp"));
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let store = dir.path().join("store").display().to_string();
    let out = Command::new(example())
        .args(["--store", &store])
        .current_dir(&cwd)
        .env_clear()
        .env("HOME", dir.path())
        .env("TMPDIR", &tmp)
        .output()
        .expect("run the example");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_dir(&cwd).unwrap().count(),
        0,
        "nothing is written into the working directory"
    );
    let prs = tmp.join("forgestate-demo/demo-session").join(PRS);
    assert_eq!(
        std::fs::read_to_string(&prs).unwrap_or_default().trim(),
        "#142 issue-42-work",
        "the pull request went to {}",
        prs.display()
    );
}
