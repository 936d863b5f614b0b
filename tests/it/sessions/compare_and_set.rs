//! Compare-and-set between processes on the local store: of several `checkpoint --if-latest`
//! naming the same record at once, exactly one posts and every other is refused with exit 73.

use std::process::Output;

use crate::common::cli::stderr;
use crate::common::world::World;

/// Processes racing in each round.
const RACERS: usize = 8;
/// Rounds, each continuing from the previous round's winner.
const ROUNDS: usize = 4;

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

#[test]
fn of_racing_if_latest_processes_on_the_local_store_exactly_one_posts() {
    let w = World::local();
    w.ok("init");
    let first = w.ok("checkpoint --agent a --session s --phase r0");
    let mut latest = first["id"].as_str().unwrap().to_string();
    for round in 1..=ROUNDS {
        let before = w.records();
        let outs: Vec<Output> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..RACERS)
                .map(|n| {
                    let (w, latest) = (&w, &latest);
                    scope.spawn(move || {
                        w.run(&format!(
                            "checkpoint --agent a --session s --phase r{round}-{n} \
                             --if-latest {latest} --json"
                        ))
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let codes: Vec<i32> = outs.iter().map(code).collect();
        let winners: Vec<&Output> = outs.iter().filter(|o| code(o) == 0).collect();
        assert_eq!(winners.len(), 1, "round {round}: exit codes {codes:?}");
        for out in outs.iter().filter(|o| code(o) != 0) {
            assert_eq!(code(out), 73, "round {round}: {}", stderr(out));
            assert!(stderr(out).contains("not posted"), "{}", stderr(out));
        }
        assert_eq!(w.records(), before + 1, "round {round}: one record posted");
        let won: serde_json::Value = serde_json::from_slice(&winners[0].stdout).unwrap();
        assert_eq!(won["record"]["parent"], latest.as_str());
        latest = won["id"].as_str().unwrap().to_string();
        let resumed = w.ok("resume --agent a --session s");
        assert_eq!(resumed["latest_id"], latest.as_str(), "round {round}");
    }
}
