//! Command-line arguments, exactly as typed (clap derive), and turning flag values into data.

use std::path::PathBuf;

pub use super::terminal::ColorArg;
use clap::{Parser, Subcommand};

mod verbs;
pub use verbs::*;

/// Where the global options are listed in every verb's help, after the verb's own.
pub const GLOBAL: &str = "Global options";

#[derive(Debug, Parser)]
#[command(
    name = "forgestate",
    version,
    about = "Persist and resume AI agents' work as checkpoint comments on a Forgejo/Gitea issue",
    after_help = "Examples:
  forgestate checkpoint --agent worker --session s1 --phase clone_complete --set issue_number=42
  forgestate resume --agent implementation-worker --session s1 --json
  forgestate list --agent 'implementation-*' --since 24h"
)]
pub struct Cli {
    /// Configuration file [default: $FORGESTATE_CONFIG, ./forgestate.toml, then the XDG dir]
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub config: Option<PathBuf>,
    /// Use the local store in DIR (overrides any configured forge or local.dir)
    #[arg(long, global = true, value_name = "DIR", help_heading = GLOBAL)]
    pub store: Option<PathBuf>,
    /// Forgejo/Gitea base URL, e.g. https://forge.example.com [env: FORGESTATE_URL; else the git remote origin]
    #[arg(long, global = true, value_name = "URL", help_heading = GLOBAL)]
    pub url: Option<String>,
    /// Repository owner on the forge [env: FORGESTATE_OWNER; else the git remote origin]
    #[arg(long, global = true, value_name = "OWNER", help_heading = GLOBAL)]
    pub owner: Option<String>,
    /// Repository name, or OWNER/NAME, on the forge [env: FORGESTATE_REPO; else the git remote origin]
    #[arg(long, global = true, value_name = "[OWNER/]NAME", help_heading = GLOBAL)]
    pub repo: Option<String>,
    /// Read the forge token from FILE (else $FORGESTATE_TOKEN, else [forge] token_file)
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub token_file: Option<PathBuf>,
    /// Allow plain http:// to a forge that is not on loopback (the token then travels in clear)
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub allow_insecure_http: bool,
    /// How long this command may wait for a forge that does not answer, e.g. 30s [env: FORGESTATE_WAIT; else [forge] wait; default 3s]
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_wait_flag, help_heading = GLOBAL)]
    pub wait: Option<std::time::Duration>,
    /// How long a command that has no answer without the forge (a cold read, rotate, export, import, prune, doctor) may wait for it, e.g. 5m [env: FORGESTATE_PATIENCE; else [forge] patience; default 60s]
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_patience_flag, help_heading = GLOBAL)]
    pub patience: Option<std::time::Duration>,
    /// Exit 75 (EX_TEMPFAIL) when a record was spooled to the outbox instead of posted
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub strict: bool,
    /// Machine output: one JSON document on stdout, errors included; human text goes to stderr.
    /// --json=FIELDS (with the equals sign) keeps only those top-level fields, comma-separated
    #[arg(
        long = "json",
        global = true,
        value_name = "FIELDS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        help_heading = GLOBAL
    )]
    pub json_fields: Option<String>,
    /// Filter the JSON answer with a jq expression (implies --json), e.g. --jq '.records[].phase'
    #[arg(long, global = true, value_name = "EXPR", help_heading = GLOBAL)]
    pub jq: Option<String>,
    /// Whether the answer is printed as JSON: --json, --json=FIELDS or --jq (set after parsing).
    #[arg(skip)]
    pub json: bool,
    /// When to colour human output [default: auto, which honours NO_COLOR]
    #[arg(long, global = true, value_name = "WHEN", help_heading = GLOBAL)]
    pub color: Option<ColorArg>,
    /// More logging on stderr (-v requests, retries and inferred settings, -vv more, -vvv everything)
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// Only errors on stderr
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    pub quiet: bool,
    /// Read the whole thread again, rebuilding the read cache (reads otherwise ask only for what changed)
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub refresh: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The global options, as clap defines them on `cmd` ([`Cli`]'s `global = true` fields): the
/// one list that `help globals`, the verbs' help and the argv pre-parser all read.
pub fn globals(cmd: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
    cmd.get_arguments().filter(|a| a.is_global_set())
}

/// Global options that mean nothing to `parse`, which reads no configuration and no store (nor to
/// `completions` and `man`, which only describe the CLI).
pub const NOT_FOR_PARSE: &[&str] = &[
    "config",
    "store",
    "url",
    "owner",
    "repo",
    "token_file",
    "allow_insecure_http",
    "wait",
    "patience",
    "strict",
];

/// `--wait`: a duration within the accepted range.
fn parse_wait_flag(text: &str) -> Result<std::time::Duration, String> {
    forgestate::config::parse_wait(text, "--wait")
}

/// `--patience`: a duration within the same range.
fn parse_patience_flag(text: &str) -> Result<std::time::Duration, String> {
    forgestate::config::parse_wait(text, "--patience")
}

/// The CLI's own commands, and every verb of the table whose command is in its module
/// ([`TableVerb`]).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the verbs as Model Context Protocol tools on stdin/stdout, for LLM agents
    #[command(after_help = "Examples:
  forgestate mcp
  forgestate mcp --store ./.forgestate
  FORGESTATE_URL=https://forge.example.com FORGESTATE_REPO=acme/app forgestate mcp -v")]
    Mcp,
    /// Run a verb on a JSON request (stdin) and print its JSON answer; with --lines, serve one
    /// request per line until stdin ends (what the Python package's Client talks to)
    #[command(after_help = "Examples:
  echo '{\"agent\": \"worker\", \"session\": \"s1\"}' | forgestate call resume
  forgestate --store ./.forgestate call --lines
  printf '%s\\n' '{\"verb\": \"list\", \"args\": {\"limit\": 1}, \"id\": 1}' | forgestate call --lines")]
    Call(CallArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell or elvish) on stdout
    #[command(after_help = "Examples:
  forgestate completions bash > ~/.local/share/bash-completion/completions/forgestate
  forgestate completions zsh > ~/.zfunc/_forgestate
  forgestate completions fish > ~/.config/fish/completions/forgestate.fish")]
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout, or write one page per verb into a directory
    #[command(after_help = "Examples:
  forgestate man | man -l -
  forgestate man > /usr/local/share/man/man1/forgestate.1
  forgestate man --dir target/man")]
    Man(ManArgs),
    /// Every verb the library runs: its subcommand is generated from its spec and flags.
    #[command(flatten)]
    Table(TableVerb),
}

/// A verb of the table the library runs: its name and the flags clap parsed, which
/// [`super::verb::table`] reads into its request.
#[derive(Debug)]
pub struct TableVerb {
    pub name: String,
    pub matches: clap::ArgMatches,
}

impl clap::FromArgMatches for TableVerb {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        match matches.subcommand() {
            Some((name, sub)) => Ok(TableVerb {
                name: name.to_string(),
                matches: sub.clone(),
            }),
            None => Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand)),
        }
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for TableVerb {
    fn augment_subcommands(mut cmd: clap::Command) -> clap::Command {
        for verb in forgestate::verbs::commands() {
            if cmd.find_subcommand(verb.get_name()).is_none() {
                cmd = cmd.subcommand(verb);
            }
        }
        cmd
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        forgestate::verbs::commands()
            .iter()
            .any(|c| c.get_name() == name)
    }
}
