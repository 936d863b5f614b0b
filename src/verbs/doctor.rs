//! `doctor`: the setup checked, each problem with its fix; the CLI runs it over the
//! configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CLI, Spec, Verb};

/// `doctor` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoctorRequest {}

/// What `doctor` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DoctorAnswer {
    /// Every check in order: name, status (ok, warn, fail, skip), ok, detail, fix.
    pub checks: Vec<crate::doctor::Check>,
    /// Whether any check failed.
    pub failed: bool,
}

/// Doctor.
pub struct Doctor;

impl Verb for Doctor {
    type Request = DoctorRequest;
    type Answer = DoctorAnswer;
    const DECLARED: Spec = Spec {
        name: "doctor",
        title: "Check the setup",
        description: "Check the setup, one check per line with the fix: config, forge, token, \
            repository, label, session issue, clock, trust, outbox, cache.",
        read_only: true,
        faces: CLI,
        example: "{}",
        about: "Check the setup, one line per check with the fix: config, forge, token, \
            repository, label, session issue, clock, trust, outbox, cache (exit 1 when a check \
            fails)",
        examples: "  forgestate doctor
  forgestate doctor --json",
        ..Spec::OPERATOR
    };
}

#[cfg(feature = "cli")]
mod cli {
    use super::{Doctor, DoctorAnswer, DoctorRequest};
    use crate::doctor::{Status, config_failed};
    use crate::error::Result;
    use crate::verbs::cli::{CliVerb, Host, Printer};

    const GREEN: &str = "\x1b[32m";
    const RED: &str = "\x1b[31m";
    const YELLOW: &str = "\x1b[33m";
    const RESET: &str = "\x1b[0m";

    impl CliVerb for Doctor {
        type Flags = DoctorRequest;

        /// One line per check; exit 1 when a check fails.
        async fn run_cli(_: &DoctorRequest, host: &impl Host, p: &impl Printer) -> Result<u8> {
            let report = match host.config() {
                // A global flag that is no setting (`--repo a/b/c`) is the command line's error.
                Err(e) if e.category() == crate::Category::Usage => return Err(e),
                Err(e) => config_failed(&e),
                Ok(config) => crate::doctor::run(&config).await,
            };
            let answer = DoctorAnswer {
                failed: report.failed(),
                checks: report.checks,
            };
            p.answer(&answer, |a| text(a, p.color()));
            Ok(if answer.failed { 1 } else { 0 })
        }
    }

    /// One line per check, marked (coloured when `color`), with its fix under it.
    fn text(answer: &DoctorAnswer, color: bool) -> String {
        let mut text = String::new();
        for c in &answer.checks {
            let (mark, paint) = match c.status {
                Status::Ok => ("✓", GREEN),
                Status::Warn => ("!", YELLOW),
                Status::Fail => ("✗", RED),
                Status::Skip => ("-", ""),
            };
            let mark = if color && !paint.is_empty() {
                format!("{paint}{mark}{RESET}")
            } else {
                mark.to_string()
            };
            text.push_str(&format!("{mark} {}: {}\n", c.name, c.detail));
            if let Some(fix) = &c.fix {
                text.push_str(&format!("    fix: {fix}\n"));
            }
        }
        text.trim_end().to_string()
    }
}
