//! What people see and carry: the status table in the issue body, export and import.

#[cfg(unix)]
mod carry_permissions;
mod clock_ahead_import;
mod export_import;
mod import_after_prune;
mod import_new_repo;
mod status_table;
