//! Never lose a checkpoint: the outbox, its drain policy and hostile entries.

mod cli;
mod drain_policy;
mod hostile_entries;
mod never_lose;
mod no_record_waits;
mod own_records_offline;
mod queue;
