//! Operator verbs end to end: doctor, prune, watch.

mod doctor;
mod exact_ids;
mod prune;
mod watch;
mod watch_pacing;
