//! The top-level help as a newcomer reads it: verbs grouped by who uses them, at most 100
//! columns, the complete exit-code footer; the one line a verb's help gives the global flags,
//! and `forgestate help globals`, which lists them; and the "did you mean" for a mistyped verb
//! (a prefix first, then the fewest edits).

/// The widest help clap prints, whatever the terminal.
pub const HELP_WIDTH: usize = 100;

/// Every verb, grouped by who uses it, in the order `--help` lists them.
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "Agents",
        &[
            "checkpoint",
            "health",
            "end",
            "resume",
            "latest",
            "list",
            "fork",
        ],
    ),
    ("Supervisors", &["status", "history", "watch", "publish"]),
    (
        "Operators",
        &[
            "init", "flush", "outbox", "prune", "rotate", "export", "import", "doctor",
        ],
    ),
    (
        "Integrations",
        &[
            "mcp",
            "call",
            "render",
            "parse",
            "resume-map",
            "schema",
            "completions",
            "man",
        ],
    ),
];

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
    let mut hide = Vec::new();
    if matches!(verb, "parse" | "completions" | "man" | "schema") {
        hide.extend(super::args::NOT_FOR_PARSE);
    }
    if !super::args::STRICT_ONLY_FOR.contains(&verb) {
        hide.push("strict");
    }
    if !READS_THE_THREAD.contains(&verb) {
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
    for arg in cmd.get_arguments().filter(|a| a.is_global_set()) {
        page = page.arg(arg.clone().global(false));
    }
    page.render_help()
}

/// The verbs that read the thread through the read cache, which `--refresh` rebuilds.
const READS_THE_THREAD: &[&str] = &[
    "resume", "latest", "list", "status", "history", "fork", "watch", "prune", "rotate", "mcp",
    "call",
];

/// The verb list of the top-level help, one section per group: `Agents:` then each verb with
/// its one-line description, wrapped to [`HELP_WIDTH`].
pub fn grouped_verbs(cmd: &clap::Command) -> String {
    let about = |name: &str| {
        cmd.find_subcommand(name)
            .and_then(|s| s.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default()
    };
    let indent = 2
        + GROUPS
            .iter()
            .flat_map(|(_, verbs)| verbs.iter())
            .map(|v| v.len())
            .max()
            .unwrap_or(0)
        + 2;
    let mut out = String::new();
    for (group, verbs) in GROUPS {
        out.push_str(&format!("{group}:\n"));
        for verb in *verbs {
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

pub use crate::face::suggest;

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<&'static str> {
        GROUPS.iter().flat_map(|(_, v)| v.iter().copied()).collect()
    }

    #[test]
    fn every_verb_is_in_exactly_one_group() {
        let cmd = super::super::errors::command(clap::ColorChoice::Never);
        let mut grouped = all();
        grouped.sort();
        let mut verbs: Vec<&str> = cmd
            .get_subcommands()
            .map(|s| s.get_name())
            .filter(|n| *n != "help")
            .collect();
        verbs.sort();
        assert_eq!(grouped, verbs);
    }

    #[test]
    fn typos_suggest_what_was_meant() {
        let verbs = all();
        assert_eq!(suggest("stat", &verbs), ["status"]);
        assert_eq!(suggest("resum", &verbs), ["resume", "resume-map"]);
        assert_eq!(suggest("chekpoint", &verbs), ["checkpoint"]);
        assert_eq!(suggest("hitsory", &verbs), ["history"]);
        assert_eq!(suggest("frobnicate", &verbs), Vec::<&str>::new());
        assert_eq!(
            suggest("s", &verbs),
            Vec::<&str>::new(),
            "one letter is no prefix"
        );
    }

    #[test]
    fn wrapped_lines_fit_and_continue_under_the_description() {
        let text = wrap("  status   ", &"word ".repeat(40), 11);
        assert!(text.lines().count() > 1);
        for line in text.lines() {
            assert!(line.chars().count() <= HELP_WIDTH, "{line:?}");
        }
        assert!(text.lines().nth(1).unwrap().starts_with("           word"));
    }
}
