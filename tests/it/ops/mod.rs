//! Operator verbs end to end: doctor, prune, watch.

mod doctor;
mod exact_ids;
mod progress;
mod prune;
mod watch;
mod watch_pacing;
