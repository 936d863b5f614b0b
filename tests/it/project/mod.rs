//! The project keeps its own promises: the import direction, the docs, the verb table.

mod docs;
mod layering;
mod verbs_parity;
