//! The local JSONL store, both backends giving the same answers, writers killed mid-write.

mod both_backends_agree;
mod killed_writers;
mod killed_writers_harness;
mod local;
mod merged;
mod torn_then_sealed;
