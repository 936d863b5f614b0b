//! `forgestate doctor`: check the setup, one line per check; exit 1 when a check fails.

use forgestate::config::Config;
use forgestate::doctor::{Report, Status, config_failed, run};

use super::args::Cli;
use super::failure::Failure;
use super::output;

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";

pub async fn doctor(cli: &Cli) -> Result<u8, Failure> {
    let over = super::open::overrides(cli)?;
    let report = match Config::load(over) {
        Err(e) => config_failed(&e),
        Ok(config) => run(&super::open::with_remote(config)).await,
    };
    print(&report, cli.json);
    Ok(if report.failed() { 1 } else { 0 })
}

fn print(report: &Report, as_json: bool) {
    if as_json {
        return output::json(&forgestate::verbs::DoctorAnswer {
            checks: report.checks.clone(),
            failed: report.failed(),
        });
    }
    let color = super::terminal::stdout_color();
    let mut text = String::new();
    for c in &report.checks {
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
    output::out(text.trim_end());
}
