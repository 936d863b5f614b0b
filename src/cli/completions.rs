//! `forgestate completions SHELL`: the shell completion script, generated from the same clap
//! command the binary parses with (clap_complete), so it never drifts from the flags.

use serde::Serialize;

use super::args::{Cli, CompletionsArgs};
use super::failure::Failure;
use super::output;

/// `completions --json`: the script inside the one JSON document the CLI promises.
#[derive(Serialize)]
struct ScriptDoc<'a> {
    shell: String,
    script: &'a str,
}

pub fn completions(cli: &Cli, a: &CompletionsArgs) -> Result<u8, Failure> {
    let shell = clap_complete::Shell::from(a.shell);
    let script = script(shell)?;
    if cli.json {
        output::json_page(&ScriptDoc {
            shell: shell.to_string(),
            script: &script,
        });
    } else {
        output::page(script.trim_end());
    }
    Ok(0)
}

pub fn script(shell: clap_complete::Shell) -> Result<String, Failure> {
    let mut cmd = super::errors::command(clap::ColorChoice::Never);
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "forgestate", &mut buf);
    String::from_utf8(buf).map_err(|e| {
        let message =
            format!("the {shell} completion script is not UTF-8 ({e}); please report this");
        Failure::new(crate::face::EX_DATAERR, message)
    })
}
