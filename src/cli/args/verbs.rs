//! The flags of the command line's own commands (clap derive): `completions`, `man`, `call`.
//! Every verb's flags are its request type's, derived beside it in `src/verbs/`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for
    #[arg(value_name = "SHELL")]
    pub shell: ShellArg,
}

/// `completions SHELL`: the shells clap_complete writes scripts for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ShellArg {
    /// Bash (bash-completion)
    Bash,
    /// Zsh (compsys)
    Zsh,
    /// Fish
    Fish,
    /// PowerShell
    Powershell,
    /// Elvish
    Elvish,
}

impl From<ShellArg> for clap_complete::Shell {
    fn from(s: ShellArg) -> clap_complete::Shell {
        match s {
            ShellArg::Bash => clap_complete::Shell::Bash,
            ShellArg::Zsh => clap_complete::Shell::Zsh,
            ShellArg::Fish => clap_complete::Shell::Fish,
            ShellArg::Powershell => clap_complete::Shell::PowerShell,
            ShellArg::Elvish => clap_complete::Shell::Elvish,
        }
    }
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write forgestate.1 and a forgestate-VERB.1 page per verb into DIR (created if missing)
    /// instead of printing the main page
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The verb to run (e.g. resume); its request is one JSON object on stdin
    #[arg(value_name = "VERB", required_unless_present = "lines")]
    pub verb: Option<String>,
    /// Serve requests, one JSON line each on stdin ({"verb": NAME, "args": {...}}), answering one
    /// JSON line each on stdout, until stdin ends
    #[arg(long, conflicts_with = "verb")]
    pub lines: bool,
}
