//! Configuration: precedence, refused values, coordinates from the git remote.

mod git_remote;
mod operator_mistakes;
mod precedence;
mod refused_values;
