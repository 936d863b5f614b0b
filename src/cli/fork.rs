//! `forgestate fork`: the library builds the forked checkpoint; it is saved like any other.

use super::args::{Cli, ForkArgs};
use super::{Failure, open, output, save};

/// Runs `fork`.
pub async fn fork(cli: &Cli, a: &ForkArgs) -> Result<u8, Failure> {
    let client = open(cli)?;
    let record = client
        .fork_record_with(
            &a.session,
            a.at.as_deref(),
            &a.new_session,
            a.agent.as_deref(),
            a.force,
        )
        .await?;
    if !cli.quiet && !cli.json {
        output::note(&format!(
            "forking session {} at record {} ({}, phase {}) into session {}",
            a.session,
            record.parent.as_deref().unwrap_or("?"),
            record.agent,
            record.phase().unwrap_or("-"),
            a.new_session
        ));
    }
    save(cli, &client, record).await
}
