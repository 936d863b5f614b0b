//! Command-line arguments, exactly as typed (clap derive), and turning flag values into data.

use std::io::Read;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};

use forgestate::format::{Kind, parse_time};

/// Where the global options are listed in every verb's help, after the verb's own.
pub const GLOBAL: &str = "Global options";

#[derive(Debug, Parser)]
#[command(
    name = "forgestate",
    version,
    about = "Persist and resume AI agents' work as checkpoint comments on a Forgejo/Gitea issue",
    after_help = "Exit codes: 0 ok, 64 usage, 65 bad input data, 74 IO, 75 try again later, 78 configuration.

Examples:
  forgestate checkpoint --agent implementation-worker --session s1 --phase clone_complete --set issue_number=42
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
    /// Exit 75 (EX_TEMPFAIL) when a record was spooled to the outbox instead of posted
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub strict: bool,
    /// Machine output: one JSON document on stdout, errors included; human text goes to stderr
    #[arg(long, global = true, help_heading = GLOBAL)]
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
    #[command(subcommand)]
    pub command: Command,
}

/// `--color`: whether human output may use ANSI colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when writing to a terminal and NO_COLOR is not set
    Auto,
    /// Always colour, even when piped or with NO_COLOR set
    Always,
    /// Never colour
    Never,
}

/// Global options that mean nothing to `parse`, which reads no configuration and no store.
pub const NOT_FOR_PARSE: &[&str] = &[
    "config",
    "store",
    "url",
    "owner",
    "repo",
    "token_file",
    "allow_insecure_http",
    "strict",
];

/// `--strict` only changes what `checkpoint` and `health` do.
pub const STRICT_ONLY_FOR: &[&str] = &["checkpoint", "health"];

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find or create the session thread (on a forge: the labelled session issue)
    #[command(after_help = "Examples:
  forgestate init
  forgestate init --url https://forge.example.com --repo acme/app --token-file ~/.forgestate-token
  forgestate init --json")]
    Init,
    /// Post a [CHECKPOINT] record: where an agent got to, and the state it needs to resume
    #[command(after_help = "Examples:
  forgestate checkpoint --agent implementation-worker --session s1 --phase clone_complete --set issue_number=42
  forgestate checkpoint --agent implementation-worker --session s1 --phase subtask_3_complete --data-file state.json
  echo '{\"pr_number\": 7}' | forgestate checkpoint --agent implementation-worker --session s1 --phase pr_created --data -")]
    Checkpoint(CheckpointArgs),
    /// Post a [HEALTH] record: a liveness signal with metrics
    #[command(after_help = "Examples:
  forgestate health --agent implementation-orchestrator --session s1
  forgestate health --agent implementation-orchestrator --session s1 --metrics '{\"active_workers\": 3}' --next-check 'in 10 iterations'
  forgestate health --agent implementation-orchestrator --session s1 --status Degraded --json")]
    Health(HealthArgs),
    /// Print the newest matching record (JSON null when there is none)
    #[command(after_help = "Examples:
  forgestate latest --agent implementation-worker --session s1
  forgestate latest --agent 'implementation-*' --kind health
  forgestate latest --session s1 --json")]
    Latest(LatestArgs),
    /// Print where an agent should resume a session, with its last checkpoint's data
    #[command(after_help = "Examples:
  forgestate resume --agent implementation-worker --session s1
  forgestate resume --agent implementation-worker --session s1 --json")]
    Resume(ResumeArgs),
    /// List records, oldest first
    #[command(after_help = "Examples:
  forgestate list --session s1
  forgestate list --agent 'implementation-*' --since 24h --limit 20
  forgestate list --invalid --json")]
    List(ListArgs),
    /// Parse one comment body and print the record as JSON, or why it is not one
    #[command(after_help = "Examples:
  forgestate parse comment.md
  pbpaste | forgestate parse -
  forgestate parse comment.md --json")]
    Parse(ParseArgs),
    /// Post the records waiting in this machine's outbox, oldest first
    #[command(after_help = "Examples:
  forgestate flush
  forgestate flush --all
  forgestate flush --from ~/.local/state/forgestate/outbox/https___forge.example.com___acme__app")]
    Flush(FlushArgs),
    /// List every outbox on this machine: its forge, waiting records, oldest age, last failure
    /// and dead letters
    #[command(after_help = "Examples:
  forgestate outbox
  forgestate outbox --json")]
    Outbox,
}

#[derive(Debug, Args)]
pub struct FlushArgs {
    /// Flush every outbox on this machine, each to the forge and repository it was spooled for
    #[arg(long, conflicts_with = "from")]
    pub all: bool,
    /// Post the records of this outbox directory to the forge configured now (for records
    /// spooled under a mistyped URL, owner or repository)
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
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
    #[arg(long, default_value = "Active")]
    pub status: String,
    /// Metrics as a JSON object, or - to read them from stdin
    #[arg(long, value_name = "JSON")]
    pub metrics: Option<String>,
    /// When the next signal is due, in words (e.g. "in 10 iterations")
    #[arg(long, value_name = "TEXT")]
    pub next_check: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// [CHECKPOINT] records
    Checkpoint,
    /// [HEALTH] records
    Health,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Kind {
        match k {
            KindArg::Checkpoint => Kind::Checkpoint,
            KindArg::Health => Kind::Health,
        }
    }
}

#[derive(Debug, Args)]
pub struct LatestArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// The record filters `latest` and `list` share.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Only records of this agent; a glob such as 'implementation-*' matches several
    #[arg(long, value_name = "GLOB")]
    pub agent: Option<String>,
    /// Only records of this session; a glob such as 'sess-*' matches several
    #[arg(long, value_name = "GLOB")]
    pub session: Option<String>,
    /// Only this kind of record [default: either]
    #[arg(long)]
    pub kind: Option<KindArg>,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The agent resuming, e.g. implementation-worker (its resume map is used)
    #[arg(long)]
    pub agent: String,
    /// The session to resume
    #[arg(long)]
    pub session: String,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only records posted at or after TIME: RFC 3339, or an age such as 90m, 24h or 7d
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only the newest N matching records (still printed oldest first)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Also list comments that are not valid, trusted records, with the reason
    #[arg(long)]
    pub invalid: bool,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The comment body to parse; - or nothing reads stdin
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
}

/// A flag value the user must fix. `usage` errors exit 64, the others 65 (bad data) or 74 (IO).
#[derive(Debug)]
pub enum InputError {
    Usage(String),
    Data(String),
    Io(String),
}

/// Reads `-` from stdin, a file, or takes the text itself.
pub fn read_input(
    inline: Option<&str>,
    file: Option<&PathBuf>,
) -> Result<Option<String>, InputError> {
    let read_stdin = || {
        let bytes = read_capped(std::io::stdin(), "stdin")?;
        utf8("stdin", bytes)
    };
    match (inline, file) {
        (Some("-"), _) => read_stdin().map(Some),
        (Some(text), _) => Ok(Some(text.to_string())),
        (None, Some(path)) if path.as_os_str() == "-" => read_stdin().map(Some),
        (None, Some(path)) => {
            let shown = path.display().to_string();
            let file = std::fs::File::open(path)
                .map_err(|e| InputError::Io(format!("cannot read {shown}: {e}")))?;
            let bytes = read_capped(file, &shown)?;
            utf8(&shown, bytes).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// Reads at most what a record could ever hold (the 1 MiB body cap): `/dev/zero` or an endless
/// pipe is refused instead of exhausting memory.
fn read_capped(input: impl Read, source: &str) -> Result<Vec<u8>, InputError> {
    let cap = forgestate::format::HARD_MAX_BODY_BYTES;
    let mut bytes = Vec::new();
    input
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::Io(format!("cannot read {source}: {e}")))?;
    if bytes.len() > cap {
        return Err(InputError::Data(format!(
            "{source} is over {cap} bytes, more than any record can hold; store file paths, \
             not file contents"
        )));
    }
    Ok(bytes)
}

/// Input text must be UTF-8; `source` names where it came from. Bad bytes are bad data (65).
fn utf8(source: &str, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        InputError::Data(format!(
            "{source} is not valid UTF-8 (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Parses a JSON object given on the command line; `what` names the flag in errors.
pub fn json_object(what: &str, text: Option<String>) -> Result<Map<String, Value>, InputError> {
    let Some(text) = text else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(InputError::Data(format!(
            "{what} must be a JSON object such as '{{\"issue_number\": 42}}'"
        ))),
        Err(e) => Err(InputError::Data(format!("{what} is not valid JSON: {e}"))),
    }
}

/// Applies `--set KEY=VALUE` pairs. VALUE is JSON when it parses (`42`, `true`, `[1,2]`,
/// `"quoted"`), otherwise the literal string.
pub fn apply_sets(data: &mut Map<String, Value>, sets: &[String]) -> Result<(), InputError> {
    for set in sets {
        let Some((key, value)) = set.split_once('=') else {
            return Err(InputError::Usage(format!(
                "--set {set:?} has no '='; write it as --set key=value"
            )));
        };
        if key.is_empty() {
            return Err(InputError::Usage(format!("--set {set:?} has an empty key")));
        }
        let value =
            serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        data.insert(key.to_string(), value);
    }
    Ok(())
}

/// A `--agent`/`--session` filter must be a valid glob (`*`, `?`, `[abc]`); `[[]` matches `[`.
pub fn check_glob(flag: &str, value: Option<&str>) -> Result<(), InputError> {
    match value.map(glob::Pattern::new) {
        Some(Err(e)) => Err(InputError::Usage(format!(
            "{flag} {:?} is not a valid glob: {e}; write [[] to match a literal [",
            value.unwrap_or_default()
        ))),
        _ => Ok(()),
    }
}

/// `--since`: an RFC 3339 time, or an age (`90m`, `24h`, `7d`) counted back from now.
pub fn parse_since(text: &str) -> Result<DateTime<Utc>, InputError> {
    if let Ok(t) = parse_time(text) {
        return Ok(t);
    }
    let age = humantime::parse_duration(text).map_err(|_| {
        InputError::Usage(format!(
            "--since {text:?} is neither an RFC 3339 time (2026-11-29T08:00:00Z) nor an age (24h, 7d)"
        ))
    })?;
    chrono::Duration::from_std(age)
        .ok()
        .and_then(|age| Utc::now().checked_sub_signed(age))
        .ok_or_else(|| InputError::Usage(format!("--since {text:?} reaches too far back")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_values_are_json_when_they_can_be() {
        let mut data = Map::new();
        let sets = [
            "issue_number=42",
            "branch=feat/x",
            "done=[1,2]",
            "q=\"7\"",
            "eq=a=b",
            "n=null",
        ];
        apply_sets(&mut data, &sets.map(String::from)).unwrap();
        assert_eq!(
            Value::Object(data),
            json!({"issue_number": 42, "branch": "feat/x", "done": [1, 2], "q": "7", "eq": "a=b", "n": null})
        );
        assert!(matches!(
            apply_sets(&mut Map::new(), &["novalue".into()]),
            Err(InputError::Usage(_))
        ));
    }

    #[test]
    fn numbers_are_kept_exactly_and_set_agrees_with_data() {
        for text in [
            "18446744073709551616",
            "-123456789012345678901234567890",
            "9007199254740993",
            "1e400",
            "-1E400",
            "0.1",
            "1.0",
        ] {
            let mut set = Map::new();
            apply_sets(&mut set, &[format!("n={text}")]).unwrap();
            let data = json_object("--data", Some(format!("{{\"n\": {text}}}")))
                .unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(set, data, "{text}");
            assert!(set["n"].is_number(), "{text}");
        }
        let mut set = Map::new();
        apply_sets(&mut set, &["big=18446744073709551616".into()]).unwrap();
        assert_eq!(set["big"].to_string(), "18446744073709551616");
    }

    #[test]
    fn input_must_be_utf8() {
        assert_eq!(utf8("stdin", b"{}".to_vec()).unwrap(), "{}");
        match utf8("data.json", b"{\"k\": \"\xff\"}".to_vec()) {
            Err(InputError::Data(msg)) => {
                assert!(
                    msg.starts_with("data.json is not valid UTF-8 (invalid byte at offset 7)"),
                    "{msg}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn since_takes_times_and_ages() {
        let t = parse_since("2026-11-29T08:00:00Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-29T08:00:00+00:00");
        let age = Utc::now() - parse_since("24h").unwrap();
        assert!((age.num_minutes() - 24 * 60).abs() <= 1);
        assert!(parse_since("last week").is_err());
    }

    #[test]
    fn data_must_be_an_object() {
        assert!(matches!(
            json_object("--data", Some("[1]".into())),
            Err(InputError::Data(_))
        ));
        assert!(matches!(
            json_object("--data", Some("{".into())),
            Err(InputError::Data(_))
        ));
        assert_eq!(json_object("--data", None).unwrap(), Map::new());
    }
}
