//! Loading the configuration with the command line laid over it, and opening the store it
//! names, with the notes the user should see.

use forgestate::backend::AnyThread;
use forgestate::config::{Config, Overrides, StoreSettings};
use forgestate::report::StatusPolicy;
use forgestate::store::THREAD_FILE;
use forgestate::{Client, Error};

use super::args::Cli;
use super::failure::Failure;
use super::{output, progress, remote};

/// The global flags as the configuration's top layer, with `--repo owner/name` split.
pub(crate) fn overrides(cli: &Cli) -> forgestate::Result<Overrides> {
    let mut over = Overrides {
        config: cli.config.clone(),
        store: cli.store.clone(),
        url: cli.url.clone(),
        owner: cli.owner.clone(),
        repo: cli.repo.clone(),
        token_file: cli.token_file.clone(),
        allow_insecure_http: cli.allow_insecure_http,
        wait: cli.wait,
        patience: cli.patience,
    };
    remote::split_repo(&mut over).map_err(Error::usage)?;
    Ok(over)
}

/// Loads the configuration with the global flags laid over it and, where nothing else sets
/// them, the forge coordinates of the working directory's git remote `origin`.
pub(crate) fn load(cli: &Cli) -> forgestate::Result<Config> {
    let config = Config::load(overrides(cli)?)?;
    Ok(match std::env::current_dir() {
        Ok(cwd) => {
            let over = remote::infer(&config, &cwd);
            config.with_overrides(over)
        }
        Err(_) => config,
    })
}

/// The configured store, opened, and the `[status]` policy, for `mcp` and `call`: a client kept
/// for many requests (`kept`) is a writer of its own ([`Writer::Own`]), a single `call` the
/// machine's.
pub(crate) fn store(cli: &Cli, kept: bool) -> Result<(Client<AnyThread>, StatusPolicy), Failure> {
    let config = load(cli)?;
    let policy = config.status_policy()?;
    let writer = if kept { Writer::Own } else { Writer::Machine };
    Ok((open(cli, &config, writer)?, policy))
}

/// Who a client writes as when `FORGESTATE_WRITER` names no one.
#[derive(Clone, Copy)]
pub(crate) enum Writer {
    /// The writer kept in the machine's lineage directory: every CLI command of a machine.
    Machine,
    /// A fresh one, for a client kept for a whole process (`mcp`, `call --lines`: one Python
    /// `Client`). The machine's writer is neither read nor made: a child whose store is never
    /// opened (Python's pure functions point it into the null device) has nothing to warn about.
    Own,
}

/// Opens the store of `config` as `writer`, with the notes the user should see (see [`opened`]).
pub(crate) fn open(
    cli: &Cli,
    config: &Config,
    writer: Writer,
) -> forgestate::Result<Client<AnyThread>> {
    let (client, note) = opened(cli, config, writer)?;
    if let Some(note) = note {
        output::note(&note);
    }
    Ok(client)
}

/// Opens the store of `config`; the note naming the default store is returned, to be shown once
/// the command's own checks passed (a mistyped flag is not the store's first use). It names the
/// default local store on its first use (no thread file yet), or with `-v`: a routine command is
/// quiet on stderr.
pub(crate) fn opened(
    cli: &Cli,
    config: &Config,
    writer: Writer,
) -> forgestate::Result<(Client<AnyThread>, Option<String>)> {
    let settings = config.settings()?;
    let first_use = match &settings.store {
        StoreSettings::Local { dir, .. } => !dir.join(THREAD_FILE).exists(),
        StoreSettings::Forge(_) => false,
    };
    let note = settings.note.clone();
    let client = Client::from_settings(settings)?
        .with_machine_lineage(config.state_dir())
        .with_progress(progress::hook(cli));
    let client = match (named_writer(), writer) {
        (Some(named), _) => client.with_writer(named),
        (None, Writer::Machine) => client.with_kept_writer(),
        (None, Writer::Own) => client.with_fresh_writer(),
    };
    if cli.refresh {
        client.refresh();
    }
    if config.forge_without_outbox() && !cli.quiet {
        output::note(
            "warning: no outbox: neither $XDG_STATE_HOME nor $HOME is set, nor [forge] \
             outbox_dir; a record the forge cannot take now is not kept (the command then fails)",
        );
    }
    let note = note.filter(|_| !cli.quiet && (first_use || cli.verbose > 0));
    Ok((client, note))
}

/// The writer `FORGESTATE_WRITER` names: the one a supervisor took the session over for
/// (`resume --take-over --writer`), so the next worker writes as it from its first command.
pub(crate) fn named_writer() -> Option<String> {
    std::env::var("FORGESTATE_WRITER")
        .ok()
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_global_flags_become_the_configurations_top_layer() {
        let cli = Cli::try_parse_from([
            "forgestate",
            "--config",
            "ops.toml",
            "--store",
            "/s",
            "--url",
            "https://f.example",
            "--repo",
            "acme/app",
            "--token-file",
            "tok",
            "--allow-insecure-http",
            "--wait",
            "500ms",
            "--patience",
            "2m",
            "init",
        ])
        .unwrap();
        assert_eq!(
            overrides(&cli).ok().unwrap(),
            Overrides {
                config: Some("ops.toml".into()),
                store: Some("/s".into()),
                url: Some("https://f.example".into()),
                owner: Some("acme".into()),
                repo: Some("app".into()),
                token_file: Some("tok".into()),
                allow_insecure_http: true,
                wait: Some(Duration::from_millis(500)),
                patience: Some(Duration::from_secs(120)),
            }
        );
        let none = Cli::try_parse_from(["forgestate", "init"]).unwrap();
        assert_eq!(overrides(&none).ok().unwrap(), Overrides::default());
    }
}
