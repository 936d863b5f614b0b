//! Sessions that end, write-ahead intents, compare-and-set, lineage and fork.

mod cli;
mod compare_and_set;
mod fencing_holds;
mod fencing_rule;
mod fork_carries_intent;
mod fork_live;
mod fork_never_rewinds;
mod library;
mod machines;
mod takeover;
mod writers;
