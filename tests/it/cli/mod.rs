//! The real binary: output, help, errors, exit codes, supervision verbs.

mod against_forge;
mod completions;
mod escapes_in_watch_and_warnings;
mod exit_codes;
mod first_hour;
mod flags_and_fields;
mod help;
mod human_output;
mod init;
mod json_errors;
mod list_table;
mod local_store;
mod look_alike_names;
mod progress;
mod render;
mod repeated_keys;
mod select;
mod supervise;
mod table_layout;
