//! `forgestate fork`: the verb builds and saves the forked checkpoint; this says what it forked.

use forgestate::verbs::SaveAnswer;

use super::args::{Cli, ForkArgs};
use super::output;

/// The line naming what was forked into what (not with `--json` or `--quiet`).
pub fn forked(cli: &Cli, a: &ForkArgs, answer: &SaveAnswer) {
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
