//! Configuration: precedence, refused values, coordinates from the git remote.

mod git_remote;
mod precedence;
mod refused_values;
