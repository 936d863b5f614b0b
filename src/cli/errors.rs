//! How failures reach the user: one `forgestate: error:` line on stderr and, with `--json`, one
//! `{"error": {"code", "category", "message"}}` document on stdout, usage errors from clap included.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ColorChoice, CommandFactory, FromArgMatches};
use serde::Serialize;

use super::args::{Cli, ColorArg};
use super::argv::{color_in_argv, is_help_globals, json_word, wants_json};
use super::help;
use super::output;

pub use crate::face::{ErrorBody, exit_code};

#[derive(Debug, Serialize)]
struct ErrorDoc {
    error: ErrorBody,
}

/// Reports a failure: the human line on stderr and, with `--json`, the error document on stdout
/// unless the verb already printed its one document (which then carries the error itself).
pub fn report(code: u8, message: &str, as_json: bool) {
    report_body(ErrorBody::new(code, message), message, as_json);
}

/// [`report`] for an error object already made (a `parse` failure carries its `reason`).
pub fn report_body(body: ErrorBody, message: &str, as_json: bool) {
    output::error(message);
    if as_json && !output::printed() {
        print_doc(body);
    }
}

/// Prints `{"error": body}` on stdout, whole (`--json=FIELDS` and `--jq` select from answers,
/// never from the error document).
pub fn print_doc(body: ErrorBody) {
    output::json_whole(&ErrorDoc { error: body });
}

/// Sets `cli.json` and the output selection from `--json[=FIELDS]` and `--jq`, and checks the
/// fields against the verb's answer (from the verb table) before anything runs, so a typo
/// never follows a post.
fn select_output(cli: &mut Cli, verb: Option<&str>) -> Result<(), String> {
    cli.json = cli.json_fields.is_some() || cli.jq.is_some();
    let mut selection = output::Selection::new(cli.json_fields.as_deref(), cli.jq.as_deref())?;
    let spec = verb.and_then(forgestate::verbs::spec);
    // `call` runs any verb, writing ones included.
    selection.writes = spec.map_or(verb == Some("call"), |s| !s.read_only);
    if let (Some(fields), Some(spec)) = (&selection.fields, spec) {
        let schema = (spec.answer)();
        if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
            let valid: Vec<String> = props.keys().cloned().collect();
            output::check_fields(fields, &valid)?;
        }
    }
    output::set_selection(selection);
    Ok(())
}

/// The clap command with the help adjustments derive cannot express: a verb's help lists its
/// own flags and one line pointing to `forgestate help globals` (the global options are still
/// accepted everywhere; see [`help::globals_line`]), the top-level help lists the verbs by group
/// with the exit-code footer, and nothing is wider than [`help::HELP_WIDTH`].
pub fn command(color: ColorChoice) -> clap::Command {
    let mut cmd = Cli::command().color(color).max_term_width(help::HELP_WIDTH);
    // A verb that already has an argument keeps it when globals propagate (at build time), so a
    // hidden copy of a global hides it there. Mutating after the build would corrupt clap's index.
    let globals: Vec<clap::Arg> = super::args::globals(&cmd).cloned().collect();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        if let Some(sub) = cmd.find_subcommand_mut(&name) {
            let mut s = std::mem::take(sub);
            for arg in &globals {
                s = s.arg(arg.clone().hide(true));
            }
            let examples = s
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            s = s.after_help(format!("{}\n\n{examples}", help::globals_line(&name)));
            *sub = s;
        }
    }
    let template = format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{}Options:\n{{options}}{{after-help}}",
        help::grouped_verbs(&cmd)
            .replace('{', "{{")
            .replace('}', "}}")
    );
    let footer = format!(
        "{}\n\n{}",
        help::EXIT_CODES,
        cmd.get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default()
    );
    cmd = cmd.help_template(template).after_help(footer);
    cmd.build();
    cmd
}

/// Parses argv. `Err` holds the exit code when there is nothing to run: a usage error, printed
/// (and the JSON document with `--json`), or `--help` and `--version`, printed, with 0.
pub fn parse_args() -> Result<Cli, u8> {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let as_json = wants_json(&argv);
    super::terminal::set_color(color_in_argv(&argv));
    let color = match color_in_argv(&argv) {
        Some(ColorArg::Always) => ColorChoice::Always,
        Some(ColorArg::Never) => ColorChoice::Never,
        _ if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => ColorChoice::Never,
        _ => ColorChoice::Auto,
    };
    let mut cmd = command(color);
    if is_help_globals(&cmd, &argv) {
        output::page(help::globals_page(&cmd).to_string().trim_end());
        return Err(0);
    }
    let e = match cmd.try_get_matches_from_mut(&argv).and_then(|m| {
        Cli::from_arg_matches(&m).map(|cli| (cli, m.subcommand_name().map(str::to_string)))
    }) {
        Ok((mut cli, verb)) => {
            return match select_output(&mut cli, verb.as_deref()) {
                Ok(()) => Ok(cli),
                Err(message) => {
                    output::error(&message);
                    if cli.json {
                        print_doc(ErrorBody::new(crate::face::EX_USAGE, &message));
                    }
                    Err(crate::face::EX_USAGE)
                }
            };
        }
        Err(e) => e.with_cmd(&cmd),
    };
    if !e.use_stderr() {
        // --help, --version: clap prints them on stdout.
        let _ = e.print();
        return Err(0);
    }
    // What follows the error line: clap's usage lines and tips.
    let mut after = String::new();
    let message = match e.kind() {
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let _ = e.print();
            let verbs: Vec<&str> = cmd
                .get_subcommands()
                .filter(|c| !c.is_hide_set() && c.get_name() != "help")
                .map(|c| c.get_name())
                .collect();
            format!(
                "a verb is required ({}); run `forgestate --help`",
                verbs.join(", ")
            )
        }
        ErrorKind::InvalidSubcommand | ErrorKind::UnknownArgument if json_word(&argv).is_some() => {
            let (verb, word) = json_word(&argv).unwrap_or_default();
            format!(
                "unexpected argument '{word}' after --json; did you mean `--json={word}`? \
                 (--json takes its fields after an equals sign; `forgestate {verb} --json` \
                 alone prints the whole answer)"
            )
        }
        ErrorKind::InvalidSubcommand => {
            let typed = match e.get(ContextKind::InvalidSubcommand) {
                Some(ContextValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            let verbs = help::commands();
            let hint = crate::face::did_you_mean(
                &typed,
                &verbs,
                |v| format!("'{v}'"),
                "run `forgestate --help` for the verbs",
            );
            format!("unrecognized verb '{typed}'; {hint}")
        }
        _ => {
            // clap's first paragraph is the error; the rest (usage, tips) stays as it is.
            let text = e.render().to_string();
            let text = text.trim_end();
            let text = text.strip_prefix("error: ").unwrap_or(text);
            let (first, rest) = text.split_once("\n\n").unwrap_or((text, ""));
            after = rest.to_string();
            first
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    output::error(&message);
    if !after.trim().is_empty() {
        output::raw_err(&after);
    }
    if as_json {
        print_doc(ErrorBody::new(crate::face::EX_USAGE, &message));
    }
    Err(crate::face::EX_USAGE)
}
