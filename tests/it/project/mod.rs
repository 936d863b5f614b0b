//! The project keeps its own promises: the import direction, the docs, the verb table.

mod docs;
mod file_cycles;
mod layering;
mod verbs_parity;
