//! Compare-and-set between processes on the local store: of several `checkpoint --if-latest`
//! (or `call --lines` checkpoints with `if_latest`) naming the same record at once, exactly one
//! posts and every other is refused with exit 73 (code 73), naming the winner.

use serde_json::{Value, json};

use crate::common::cli::{Bin, stderr};
use crate::common::world::World;

/// Processes racing in each round.
const RACERS: usize = 8;
/// Rounds, each continuing from the previous round's winner.
const ROUNDS: usize = 4;

/// How a racer asks for its checkpoint.
#[derive(Clone, Copy)]
enum Face {
    Cli,
    Lines,
}

/// One racer's answer: the record id it posted, or the error code and message it was refused with.
fn race_once(w: &World, face: Face, phase: &str, latest: &str) -> Result<String, (i64, String)> {
    match face {
        Face::Cli => {
            let out = w.run(&format!(
                "checkpoint --agent a --session s --phase {phase} --if-latest {latest} --json"
            ));
            match out.status.code() {
                Some(0) => {
                    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
                    Ok(doc["id"].as_str().unwrap().to_string())
                }
                code => Err((code.map_or(-1, i64::from), stderr(&out))),
            }
        }
        Face::Lines => {
            let request = json!({"verb": "checkpoint", "id": 1, "args": {
                "agent": "a", "session": "s", "phase": phase, "if_latest": latest}});
            let store = w.store().display().to_string();
            let out = Bin::new(w.d()).stdin(format!("{request}\n")).run(&[
                "--store".into(),
                store,
                "call".into(),
                "--lines".into(),
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
            match answer["answer"]["id"].as_str() {
                Some(id) => Ok(id.to_string()),
                None => Err((
                    answer["error"]["code"].as_i64().unwrap_or(-1),
                    answer["error"]["message"].to_string(),
                )),
            }
        }
    }
}

fn exactly_one_of_racing_writers_posts(face: Face) {
    let w = World::local();
    w.ok("init");
    let first = w.ok("checkpoint --agent a --session s --phase r0");
    let mut latest = first["id"].as_str().unwrap().to_string();
    for round in 1..=ROUNDS {
        let before = w.records();
        let answers: Vec<_> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..RACERS)
                .map(|n| {
                    let (w, latest) = (&w, &latest);
                    scope.spawn(move || race_once(w, face, &format!("r{round}-{n}"), latest))
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let winners: Vec<&String> = answers.iter().filter_map(|a| a.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {answers:?}");
        let winner = winners[0].clone();
        for (code, message) in answers.iter().filter_map(|a| a.as_ref().err()) {
            assert_eq!(*code, 73, "round {round}: {message}");
            assert!(message.contains("not posted"), "{message}");
            assert!(message.contains(&winner), "names the winner: {message}");
        }
        assert_eq!(w.records(), before + 1, "round {round}: one record posted");
        let resumed = w.ok("resume --agent a --session s");
        assert_eq!(resumed["latest_id"], winner.as_str(), "round {round}");
        let history = w.ok("history --agent a --session s");
        assert!(
            history["conflicts"].as_array().is_none_or(Vec::is_empty),
            "round {round}: no two records share a parent: {history}"
        );
        latest = winner;
    }
}

#[test]
fn of_racing_if_latest_processes_on_the_local_store_exactly_one_posts() {
    exactly_one_of_racing_writers_posts(Face::Cli);
}

#[test]
fn of_racing_call_lines_if_latest_checkpoints_exactly_one_posts() {
    exactly_one_of_racing_writers_posts(Face::Lines);
}
