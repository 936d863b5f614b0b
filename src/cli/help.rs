//! The top-level help as a newcomer reads it: verbs grouped by who uses them, at most 100
//! columns, the complete exit-code footer; the one line a verb's help gives the global flags,
//! and `forgestate help globals`, which lists them; and the "did you mean" for a mistyped verb
//! (a prefix first, then the fewest edits).

use forgestate::verbs::{self, Group};

/// The widest help clap prints, whatever the terminal.
pub const HELP_WIDTH: usize = 100;

/// The CLI's own commands, which are not verbs of the table: their group, and whether they
/// come before the group's verbs in `--help`.
const OWN: &[(&str, Group, bool)] = &[
    ("mcp", Group::Integrations, true),
    ("call", Group::Integrations, true),
    ("completions", Group::Integrations, false),
    ("man", Group::Integrations, false),
];

/// Every command, grouped by who uses it, in the order `--help` lists them: each group's verbs
/// in the table's order (their [`Spec::group`]), with the CLI's own commands.
pub fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
    Group::ALL
        .iter()
        .map(|&group| {
            let own = |first: bool| {
                OWN.iter()
                    .filter(move |(_, g, f)| *g == group && *f == first)
                    .map(|(name, _, _)| *name)
            };
            let verbs = verbs::table()
                .into_iter()
                .filter(move |s| s.group == group)
                .map(|s| s.name);
            (
                group.heading(),
                own(true).chain(verbs).chain(own(false)).collect(),
            )
        })
        .collect()
}

/// Every command's name, in `--help`'s order.
pub fn commands() -> Vec<&'static str> {
    groups().into_iter().flat_map(|(_, v)| v).collect()
}

/// The exit-code footer of `--help`: every code the binary exits with.
pub const EXIT_CODES: &str = "Exit codes: 0 ok (also nothing found, a fresh start); 1 a check \
failed (doctor) or an agent is stalled (status --fail-on-stalled); 64 usage; 65 bad input data; \
73 not posted, someone continued the session first (--if-latest); 74 IO; 75 try again later (forge unreachable, or --strict and the record spooled); 78 \
configuration.";

/// Global options that mean nothing to a verb's work, left out of its help's line on the
/// globals (still accepted, and ignored): the store and forge flags for the verbs that open
/// none, `--strict` for those that post nothing, `--refresh` for those that read no thread
/// through the read cache.
pub fn unused_globals(verb: &str) -> Vec<&'static str> {
    let spec = verbs::spec(verb);
    let mut hide = Vec::new();
    // The CLI's own commands: `mcp` and `call` run every verb (`call` honours --strict as the
    // saving verbs do); completions and man open nothing.
    let runs_verbs = matches!(verb, "mcp" | "call");
    let opens_store = spec.map_or(runs_verbs, |s| s.opens_store);
    let strict = spec.map_or(verb == "call", |s| s.strict);
    let reads_thread = spec.map_or(runs_verbs, |s| s.reads_thread);
    if !opens_store {
        hide.extend(super::args::NOT_FOR_PARSE);
    }
    if !strict {
        hide.push("strict");
    }
    if !reads_thread {
        hide.push("refresh");
    }
    hide
}

/// The line a verb's help gives the global options: a few that apply to it, and where the rest
/// are (gh's "inherited flags" and cargo's manual, in one line).
pub fn globals_line(verb: &str) -> String {
    let unused = unused_globals(verb);
    let shown: Vec<&str> = [
        ("json_fields", "--json"),
        ("jq", "--jq"),
        ("store", "--store"),
        ("repo", "--repo"),
        ("strict", "--strict"),
        ("verbose", "-v"),
    ]
    .into_iter()
    .filter(|(id, _)| !unused.contains(id))
    .map(|(_, flag)| flag)
    .collect();
    format!(
        "Global options: {}, ... (`forgestate help globals`)",
        shown.join(", ")
    )
}

/// `forgestate help globals`: every global option, described, with where it may stand.
pub fn globals_page(cmd: &clap::Command) -> clap::builder::StyledStr {
    let mut page = clap::Command::new("forgestate")
        .about(
            "Options every verb takes, before or after the verb (flags beat the environment, \
             which beats the configuration file; docs/config.md has the keys).",
        )
        .override_usage("forgestate [GLOBAL OPTIONS] <VERB> [OPTIONS]")
        .disable_help_flag(true)
        .disable_version_flag(true)
        .max_term_width(HELP_WIDTH)
        .help_template("{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}");
    for arg in super::args::globals(cmd) {
        page = page.arg(arg.clone().global(false));
    }
    page.render_help()
}

/// The verb list of the top-level help, one section per group: `Agents:` then each verb with
/// its one-line description, wrapped to [`HELP_WIDTH`].
pub fn grouped_verbs(cmd: &clap::Command) -> String {
    let about = |name: &str| {
        cmd.find_subcommand(name)
            .and_then(|s| s.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default()
    };
    let indent = 2 + commands().iter().map(|v| v.len()).max().unwrap_or(0) + 2;
    let mut out = String::new();
    for (group, verbs) in groups() {
        out.push_str(&format!("{group}:\n"));
        for verb in verbs {
            let lead = format!("  {verb:<width$}", width = indent - 2);
            out.push_str(&wrap(&lead, &about(verb), indent));
        }
        out.push('\n');
    }
    out
}

/// `lead` then `text`, wrapped at word boundaries to [`HELP_WIDTH`], continuation lines
/// indented by `indent`.
fn wrap(lead: &str, text: &str, indent: usize) -> String {
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > HELP_WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}
