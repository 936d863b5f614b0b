//! The top layer of the configuration: settings a program gives directly (the CLI's global
//! flags are one source), laid over the environment and the file as they are laid over the
//! built-in defaults. Plain data: whoever fills it in, configuration knows only the values.

use std::path::PathBuf;
use std::time::Duration;

/// Settings given directly, which beat the environment and the configuration file. The CLI
/// fills them from its global flags (`--config`, `--store`, `--url`, `--owner`, `--repo`,
/// `--token-file`, `--allow-insecure-http`, `--wait`, `--patience`); a program may fill them from anywhere.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// The configuration file to read, before `$FORGESTATE_CONFIG` and the usual places (it
    /// must exist). Read only when the configuration is loaded ([`super::Config::load`]).
    pub config: Option<PathBuf>,
    /// Use a local store in this directory, whatever else is configured.
    pub store: Option<PathBuf>,
    /// The forge's base URL.
    pub url: Option<String>,
    /// The repository owner.
    pub owner: Option<String>,
    /// The repository name, or `OWNER/NAME`.
    pub repo: Option<String>,
    /// A file holding the API token.
    pub token_file: Option<PathBuf>,
    /// Allow plain `http://` off loopback.
    pub allow_insecure_http: bool,
    /// The command's wait budget (already checked against its range).
    pub wait: Option<Duration>,
    /// How long a command without an answer of its own waits for the forge (`--patience`).
    pub patience: Option<Duration>,
}
