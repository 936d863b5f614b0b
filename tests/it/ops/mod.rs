//! Operator verbs end to end: doctor, prune, watch.

mod doctor;
mod prune;
mod watch;
