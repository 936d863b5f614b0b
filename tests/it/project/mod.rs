//! The project keeps its own promises: the import direction, the docs, the architecture map,
//! the verb table.

mod architecture;
mod docs;
mod file_cycles;
mod layering;
mod reference_docs;
mod verb_names;
mod verbs_parity;
