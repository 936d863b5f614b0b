//! What people see and carry: the status table in the issue body, export and import.

mod export_import;
mod import_after_prune;
mod status_table;
