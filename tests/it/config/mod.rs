//! Configuration: precedence, refused values, coordinates from the git remote.

mod documented_defaults;
mod durations;
mod git_remote;
mod operator_mistakes;
mod precedence;
mod refused_values;
