//! Progress bars (indicatif) for the library's progress hook: on stderr, only when stderr is a
//! terminal (indicatif also stays silent when `TERM` is unset or `dumb`), never with `--json` or
//! `--quiet`, never on stdout.
//!
//! A task shows a bar once it has at least [`SHOW_FROM`] units of work (or an unknown amount),
//! so a command that drains one waiting record does not flash one. The bar is cleared when the
//! task ends; messages printed while it shows go through [`suspend`] so they are not torn.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use forgestate::progress::{Progress, ProgressHook, Step};

use super::args::Cli;

/// The least amount of work worth a bar.
const SHOW_FROM: u64 = 10;

/// The bars showing now, so other stderr output can step around them.
static SHOWING: Mutex<Vec<ProgressBar>> = Mutex::new(Vec::new());

/// The hook the CLI hands the library: bars on a terminal on stderr, with neither `--json` nor
/// `--quiet`; silence otherwise.
pub fn hook(cli: &Cli) -> ProgressHook {
    if std::io::stderr().is_terminal() && !cli.json && !cli.quiet {
        ProgressHook::new(Bars::default())
    } else {
        ProgressHook::silent()
    }
}

/// Runs `write` (a line on stderr) with any bar out of the way, then redraws the bar.
pub fn suspend<R>(write: impl FnOnce() -> R) -> R {
    let bar = SHOWING.lock().ok().and_then(|b| b.last().cloned());
    match bar {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// Stderr for the log subscriber, stepping around any bar.
pub struct Stderr;

impl std::io::Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        suspend(|| std::io::stderr().write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// One bar per task under way.
#[derive(Default)]
struct Bars {
    tasks: Mutex<HashMap<String, ProgressBar>>,
}

impl Progress for Bars {
    fn report(&self, step: &Step<'_>) {
        let Ok(mut tasks) = self.tasks.lock() else {
            return;
        };
        if step.finished {
            if let Some(bar) = tasks.remove(step.task) {
                bar.finish_and_clear();
                if let Ok(mut showing) = SHOWING.lock() {
                    showing.retain(|b| !b.is_finished());
                }
            }
            return;
        }
        if !tasks.contains_key(step.task) {
            if step.total.is_some_and(|t| t < SHOW_FROM) {
                return;
            }
            let bar = new_bar(step);
            if let Ok(mut showing) = SHOWING.lock() {
                showing.push(bar.clone());
            }
            tasks.insert(step.task.to_string(), bar);
        }
        if let Some(bar) = tasks.get(step.task) {
            if let Some(total) = step.total {
                bar.set_length(total);
            }
            bar.set_position(step.done);
        }
    }
}

fn new_bar(step: &Step<'_>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(step.total, ProgressDrawTarget::stderr());
    let template = match step.total {
        Some(_) => "forgestate: {msg} [{bar:30}] {pos}/{len} ({elapsed})",
        None => "forgestate: {msg} {spinner} {pos} ({elapsed})",
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(step.task.to_string());
    // Keeps the elapsed time moving while one slow request is under way.
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
