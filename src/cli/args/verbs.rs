//! Each verb's own flags (clap derive), as typed; `requests.rs` makes them the verbs' requests.
//! A leaf: the verbs' files use these, and these use nothing of theirs.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use forgestate::verbs::DEFAULT_STATUS;

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
pub struct CheckpointArgs {
    /// The agent posting the checkpoint, e.g. implementation-worker
    #[arg(long)]
    pub agent: String,
    /// The session (one run of work) the checkpoint belongs to
    #[arg(long)]
    pub session: String,
    /// The phase just completed, e.g. subtask_3_complete; the resume map turns it into a resume point
    #[arg(long)]
    pub phase: String,
    /// State data as a JSON object, or - to read it from stdin
    #[arg(long, value_name = "JSON", conflicts_with = "data_file")]
    pub data: Option<String>,
    /// Read the state data from a JSON file
    #[arg(long, value_name = "FILE")]
    pub data_file: Option<PathBuf>,
    /// Set one key of the data; VALUE is parsed as JSON when it can be, else taken as a string
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Handoff: the next step, in one line, for whoever picks the work up (a `Next:` line)
    #[arg(long, value_name = "TEXT")]
    pub next: Option<String>,
    /// Handoff: something in the way, in one line (a `Blocker:` line; repeat for several)
    #[arg(long = "blocker", value_name = "TEXT")]
    pub blockers: Vec<String>,
    /// Record the hash of this context file (a `Context-Hash:` line), so that
    /// `resume --context-file` can tell whether it changed
    #[arg(long, value_name = "FILE")]
    pub context_file: Option<PathBuf>,
    /// The record's id instead of a fresh one: a UUID another system gave this step (it must be
    /// new to the thread)
    #[arg(long, value_name = "UUID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub session_flags: Box<SessionFlags>,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// The agent signalling, e.g. implementation-orchestrator
    #[arg(long)]
    pub agent: String,
    /// The session the signal belongs to
    #[arg(long)]
    pub session: String,
    /// The agent's status, in one word or a short phrase
    #[arg(long, default_value = DEFAULT_STATUS)]
    pub status: String,
    /// Metrics as a JSON object, or - to read them from stdin
    #[arg(long, value_name = "JSON")]
    pub metrics: Option<String>,
    /// When the next signal is due, in words (e.g. "in 10 iterations")
    #[arg(long, value_name = "TEXT")]
    pub next_check: Option<String>,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The comment body to parse; - or nothing reads stdin
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
}

/// The flags `checkpoint` takes to continue a session safely.
#[derive(Debug, Args)]
pub struct SessionFlags {
    /// Write-ahead intent: the side effect about to happen (e.g. create_pr); `resume` reports
    /// it as pending until a later checkpoint confirms it
    #[arg(long, value_name = "NAME")]
    pub intent: Option<String>,
    /// JSON the intent needs to check the world later (e.g. '{"branch": "fix-42"}')
    #[arg(long, value_name = "JSON", requires = "intent")]
    pub intent_data: Option<String>,
    /// Confirm this intent explicitly (any later checkpoint confirms an earlier one anyway)
    #[arg(long, value_name = "NAME")]
    pub done: Option<String>,
    /// Compare-and-set: post only if the newest record of this agent and session is ID
    /// (resume's latest_id); otherwise post nothing and exit 73
    #[arg(long, value_name = "ID")]
    pub if_latest: Option<String>,
    /// Start from the session's newest checkpoint data and apply --data/--set on top
    #[arg(long)]
    pub merge: bool,
    /// The record this one continues from (its Parent: line): a record id, e.g. the latest_id
    /// resume printed; without it, the last record of the session this machine saved or resumed
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
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

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The record as a JSON object (as `parse` prints it); - or nothing reads stdin
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
}
