//! The project keeps its own promises: the import direction, the docs, the architecture map,
//! the verb table.

mod architecture;
mod docs;
mod layering;
mod verbs_parity;
