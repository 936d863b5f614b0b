//! Whether the terminal may be coloured (`--color`, `NO_COLOR`) and how wide it is: what the
//! verbs' text is laid out for ([`forgestate::verbs::cli::table`] draws it).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

use forgestate::verbs::cli::table::Layout;

/// `--color`: whether human output may use ANSI colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorArg {
    /// Colour when writing to a terminal and NO_COLOR is not set
    Auto,
    /// Always colour, even when piped or with NO_COLOR set
    Always,
    /// Never colour
    Never,
}

/// Bit 0: colour on stdout; bit 1: colour on stderr. Set once at start-up.
static COLOR: AtomicU8 = AtomicU8::new(0);

/// Whether a stream may be coloured: `--color always|never` decides; `auto` (the default)
/// colours a terminal unless `NO_COLOR` is set to anything but the empty string.
pub fn color_allowed(choice: Option<ColorArg>, is_tty: bool, no_color: Option<&str>) -> bool {
    match choice {
        Some(ColorArg::Always) => true,
        Some(ColorArg::Never) => false,
        Some(ColorArg::Auto) | None => is_tty && no_color.is_none_or(str::is_empty),
    }
}

/// Decides colour for stdout and stderr from `--color` and the environment.
pub fn set_color(choice: Option<ColorArg>) {
    let no_color = std::env::var("NO_COLOR").ok();
    let out = color_allowed(choice, std::io::stdout().is_terminal(), no_color.as_deref());
    let err = color_allowed(choice, std::io::stderr().is_terminal(), no_color.as_deref());
    COLOR.store(u8::from(out) | (u8::from(err) << 1), Ordering::Relaxed);
}

pub fn stdout_color() -> bool {
    COLOR.load(Ordering::Relaxed) & 1 != 0
}

pub fn stderr_color() -> bool {
    COLOR.load(Ordering::Relaxed) & 2 != 0
}

/// The layout for stdout: [`Layout::Terminal`] at the terminal's width when stdout is one.
pub fn stdout_layout() -> Layout {
    if std::io::stdout().is_terminal() {
        Layout::Terminal(terminal_width())
    } else {
        Layout::Piped
    }
}

/// The terminal's width: `$COLUMNS` when set to a number, else the terminal's own, else 80.
fn terminal_width() -> usize {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return n;
    }
    if let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size_of(std::io::stdout())
        && w > 0
    {
        return usize::from(w);
    }
    80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_the_flag_then_no_color_then_the_terminal() {
        assert!(color_allowed(Some(ColorArg::Always), false, Some("1")));
        assert!(!color_allowed(Some(ColorArg::Never), true, None));
        assert!(color_allowed(None, true, None));
        assert!(color_allowed(Some(ColorArg::Auto), true, Some("")));
        assert!(!color_allowed(None, true, Some("1")), "NO_COLOR");
        assert!(!color_allowed(None, false, None), "not a terminal");
    }
}
