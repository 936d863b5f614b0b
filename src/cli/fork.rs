//! `forgestate fork`: the verb builds and saves the forked checkpoint; this says what it forked.

use forgestate::verbs::{ForkRequest, SaveAnswer};

use super::args::Cli;
use super::output;

/// The line naming what was forked into what (not with `--json` or `--quiet`).
pub fn forked(cli: &Cli, a: &ForkRequest, answer: &SaveAnswer) {
    if cli.quiet || cli.json {
        return;
    }
    let record = &answer.record;
    output::note(&format!(
        "forked session {} at record {} ({}, phase {}) into session {}",
        a.session,
        record.parent.as_deref().unwrap_or("?"),
        record.agent,
        record.phase().unwrap_or("-"),
        a.new_session
    ));
}
