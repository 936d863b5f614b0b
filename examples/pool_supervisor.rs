//! A pool supervisor: each round it asks who is alive, posts its own `[HEALTH]` signal with the
//! pool's numbers, and prints the agents that have stalled.
//!
//! By default it runs on a throwaway local store (or the directory given as the first
//! argument) and simulates a pool: three workers start, `worker-3` goes quiet, and with
//! thresholds of 1 s (warning) and 2 s (stalled) the supervisor sees it stall within three
//! rounds. When a forge is configured (`FORGESTATE_URL`, or a file named by
//! `FORGESTATE_CONFIG`), it runs one round over the real thread instead, with the configured
//! `[status]` thresholds, and exits 1 when anything is stalled, for cron.
//!
//! ```sh
//! cargo run --example pool_supervisor
//! FORGESTATE_URL=https://forge.example.com FORGESTATE_OWNER=acme FORGESTATE_REPO=app \
//!   FORGESTATE_TOKEN=... cargo run --example pool_supervisor
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use forgestate::backend::AnyThread;
use forgestate::config::{Config, Overrides};
use forgestate::format::Record;
use forgestate::report::{StatusPolicy, StatusRow, Thresholds, Verdict};
use forgestate::scan::Filter;
use forgestate::{Client, Outcome};
use serde_json::json;

const SUPERVISOR: &str = "pool-supervisor";
const SESSION: &str = "pool-demo";

type Failure = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Failure> {
    let on_forge = ["FORGESTATE_URL", "FORGESTATE_CONFIG"]
        .iter()
        .any(|k| std::env::var_os(k).is_some());
    if on_forge {
        let config = Config::load(Overrides::default())?;
        let client = Client::from_config(&config)?;
        let stalled = round(&client, &Filter::default(), &config.status_policy()?, 1).await?;
        return Ok(ExitCode::from(u8::from(stalled > 0)));
    }

    let dir = std::env::args_os().nth(1).map_or_else(
        || std::env::temp_dir().join(format!("pool-supervisor-{}", std::process::id())),
        PathBuf::from,
    );
    println!("local store {}", dir.display());
    let client = Client::local(&dir)?;
    let policy = StatusPolicy::default().force(Thresholds {
        warn_after_secs: Some(1),
        stalled_after_secs: Some(2),
    });
    let pool = Filter {
        session: Some(SESSION.to_string()),
        ..Filter::default()
    };
    for worker in ["worker-1", "worker-2", "worker-3"] {
        let data = json!({"issue_number": 42});
        post(
            &client,
            Record::checkpoint(worker, SESSION, "clone_complete", data)?,
        )
        .await?;
    }
    for n in 1..=3 {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        // worker-3 has gone quiet; the others keep checkpointing.
        for worker in ["worker-1", "worker-2"] {
            let phase = format!("subtask_{n}_complete");
            let data =
                json!({"issue_number": 42, "completed_subtasks": (1..=n).collect::<Vec<_>>()});
            post(&client, Record::checkpoint(worker, SESSION, &phase, data)?).await?;
        }
        round(&client, &pool, &policy, n).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One supervision round: judge, signal, report. Returns how many agents are stalled.
async fn round(
    client: &Client<AnyThread>,
    filter: &Filter,
    policy: &StatusPolicy,
    n: u32,
) -> Result<usize, Failure> {
    let status = client.status(filter, policy).await?;
    let workers: Vec<&StatusRow> = status
        .rows
        .iter()
        .filter(|r| r.agent != SUPERVISOR)
        .collect();
    let count = |v: Verdict| workers.iter().filter(|r| r.verdict == v).count();
    let stalled: Vec<&&StatusRow> = workers
        .iter()
        .filter(|r| r.verdict == Verdict::Stalled)
        .collect();
    let health = if stalled.is_empty() {
        "Active"
    } else {
        "Degraded"
    };
    let metrics = json!({
        "round": n,
        "agents": workers.len(),
        "alive": count(Verdict::Alive),
        "warning": count(Verdict::Warning),
        "stalled": stalled.len(),
    });
    let session = filter.session.as_deref().unwrap_or(SESSION);
    let signal = Record::health(
        SUPERVISOR,
        session,
        health,
        metrics.clone(),
        Some("next round"),
    )?;
    post(client, signal).await?;
    println!("round {n}: {health} {metrics}");
    for r in &stalled {
        println!(
            "  stalled: {} in {} ({}; last phase {})",
            r.agent,
            r.session,
            r.reason,
            r.phase.as_deref().unwrap_or("-")
        );
    }
    Ok(stalled.len())
}

async fn post(client: &Client<AnyThread>, record: Record) -> Result<(), Failure> {
    match client.save(record).await {
        Outcome::Posted(_) => Ok(()),
        Outcome::Spooled { cause, .. } => {
            eprintln!("spooled to the outbox, the forge is not taking records now: {cause}");
            Ok(())
        }
        Outcome::Failed(e) => Err(e.into()),
    }
}
