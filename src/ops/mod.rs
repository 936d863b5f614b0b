//! Operator verbs over the library: following a thread live, pruning old records, diagnosing a
//! setup. Each is library code the CLI, the MCP server and the Python package call alike.

pub mod doctor;
pub mod prune;
pub mod watch;
