//! Reading a thread: trusted authors, dedupe by id, thread order, exact names, tamper evidence.

mod exact_names_and_unreadable;
mod oversized_comments;
mod scan;
mod signing_turned_on;
mod tamper;
mod unmade_records;
