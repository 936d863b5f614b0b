//! Loading the configuration with the command line laid over it, and opening the store it
//! names, with the notes the user should see.

use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::config::{Config, Overrides, StoreSettings};
use forgestate::store::THREAD_FILE;

use super::args::Cli;
use super::failure::Failure;
use super::{output, progress, remote};
use crate::face::EX_USAGE;

/// The settings typed on the command line, with `--repo owner/name` split and, where nothing
/// else sets them, the forge coordinates of the working directory's git remote `origin`.
pub(crate) fn overrides(cli: &Cli, config: &Config) -> Result<Overrides, Failure> {
    let mut over = Overrides {
        store: cli.store.clone(),
        url: cli.url.clone(),
        owner: cli.owner.clone(),
        repo: cli.repo.clone(),
        token_file: cli.token_file.clone(),
        allow_insecure_http: cli.allow_insecure_http,
        wait: cli.wait,
        patience: cli.patience,
    };
    remote::split_repo(&mut over).map_err(|message| Failure {
        code: EX_USAGE,
        message,
    })?;
    if let Ok(cwd) = std::env::current_dir() {
        over = remote::infer(config, over, &cwd);
    }
    Ok(over)
}

/// Loads the configuration, with the command line laid over it.
pub(crate) fn load(cli: &Cli) -> Result<(Config, Overrides), Failure> {
    let config = Config::load(cli.config.as_deref())?;
    let over = overrides(cli, &config)?;
    Ok((config.with_overrides(over.clone()), over))
}

/// Loads the configuration and opens the store, saying so when a default store was chosen.
pub(crate) fn open(cli: &Cli) -> Result<Client<AnyThread>, Failure> {
    let (config, over) = load(cli)?;
    open_with(cli, &config, &over)
}

/// Opens the store of `config` under `over`, with the notes the user should see. The line
/// naming the default local store appears on its first use (no thread file yet), or with `-v`:
/// a routine command is quiet on stderr.
pub(crate) fn open_with(
    cli: &Cli,
    config: &Config,
    over: &Overrides,
) -> Result<Client<AnyThread>, Failure> {
    let (client, note) = opened(cli, config, over)?;
    if let Some(note) = note {
        output::note(&note);
    }
    Ok(client)
}

/// [`open_with`], the note naming the default store returned to be shown once the command's
/// own checks passed (a mistyped flag is not the store's first use).
pub(crate) fn opened(
    cli: &Cli,
    config: &Config,
    over: &Overrides,
) -> Result<(Client<AnyThread>, Option<String>), Failure> {
    let settings = config.settings(over)?;
    let first_use = match &settings.store {
        StoreSettings::Local { dir, .. } => !dir.join(THREAD_FILE).exists(),
        StoreSettings::Forge(_) => false,
    };
    let note = settings.note.clone();
    let client = Client::from_settings(settings)?
        .with_machine_lineage(config.state_dir())
        .with_progress(progress::hook(cli));
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
