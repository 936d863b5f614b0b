//! The read cache: warm reads, the summary, private cache directories.

mod discoveries;
mod privacy;
mod read_cache;
mod recreated_forge;
mod signed;
mod summary;
mod unsynced;
mod warm_writes;
