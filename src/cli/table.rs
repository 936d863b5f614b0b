//! Human output for operators at a terminal: aligned columns under a header, relative ages,
//! and whether colour is allowed. Pure string building; `output.rs` decides when to use it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

use chrono::{DateTime, Utc};

use super::args::ColorArg;

const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// A colour for one cell of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Red,
    Yellow,
    Green,
    Dim,
}

/// `text` in `style` (callers colour only when colour is allowed).
pub fn paint(text: &str, style: Style) -> String {
    let code = match style {
        Style::Red => RED,
        Style::Yellow => YELLOW,
        Style::Green => GREEN,
        Style::Dim => DIM,
    };
    format!("{code}{text}{RESET}")
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

/// `forgestate: error:` / `forgestate: warning:` prefixes, coloured when stderr may be.
pub fn prefix(level: &str, color: bool) -> String {
    let paint = match level {
        "error" => RED,
        "warning" => YELLOW,
        _ => "",
    };
    if color && !paint.is_empty() {
        format!("forgestate: {paint}{level}:{RESET} ")
    } else {
        format!("forgestate: {level}: ")
    }
}

/// How long ago `then` was, as a person says it: `just now`, `45s ago`, `3m ago`, `5h ago`,
/// `12d ago`, `2y ago`. A time in the future (clock skew) reads `in 3m`, never a panic.
pub fn relative_age(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = now.signed_duration_since(then).num_seconds();
    let amount = |s: i64| {
        let s = s.unsigned_abs();
        match s {
            0..60 => format!("{s}s"),
            60..3_600 => format!("{}m", s / 60),
            3_600..172_800 => format!("{}h", s / 3_600),
            172_800..63_072_000 => format!("{}d", s / 86_400),
            _ => format!("{}y", s / 31_536_000),
        }
    };
    match secs {
        -59..=4 => "just now".to_string(),
        s if s < 0 => format!("in {}", amount(s)),
        s => format!("{} ago", amount(s)),
    }
}

/// Lays rows out in columns separated by two spaces, under `header` (bold when `color`). The
/// last column is not padded, so lines carry no trailing blanks.
pub fn render(header: &[&str], rows: &[Vec<String>], color: bool) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, cell) in cells.enumerate().take(columns) {
            if i + 1 == columns {
                text.push_str(cell);
            } else {
                let pad = widths[i].saturating_sub(cell.chars().count());
                text.push_str(cell);
                text.push_str(&" ".repeat(pad + 2));
            }
        }
        text.trim_end().to_string()
    };
    let head = line(&mut header.iter().copied());
    let mut out = if color {
        format!("{BOLD}{head}{RESET}\n")
    } else {
        format!("{head}\n")
    };
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn ages_read_like_speech_and_survive_skew() {
        let now = Utc::now();
        let ago = |secs: i64| relative_age(now - Duration::seconds(secs), now);
        assert_eq!(ago(0), "just now");
        assert_eq!(ago(45), "45s ago");
        assert_eq!(ago(3 * 60 + 5), "3m ago");
        assert_eq!(ago(5 * 3600), "5h ago");
        assert_eq!(ago(30 * 3600), "30h ago");
        assert_eq!(ago(12 * 86_400), "12d ago");
        assert_eq!(ago(3 * 365 * 86_400), "3y ago");
        assert_eq!(ago(-30), "just now", "a little skew is now");
        assert_eq!(ago(-180), "in 3m", "a clock ahead of ours");
        let extremes = [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC];
        for a in extremes {
            for b in extremes {
                assert!(!relative_age(a, b).is_empty());
            }
        }
    }

    #[test]
    fn columns_align_under_a_header() {
        let rows = vec![
            vec!["7".to_string(), "checkpoint".into(), "phase=a".into()],
            vec!["1234".to_string(), "health".into(), "status=Active".into()],
        ];
        let text = render(&["ID", "KIND", "WHAT"], &rows, false);
        assert_eq!(
            text,
            "ID    KIND        WHAT\n7     checkpoint  phase=a\n1234  health      status=Active\n"
        );
        let bold = render(&["ID"], &[], true);
        assert_eq!(bold, format!("{BOLD}ID{RESET}\n"));
    }

    #[test]
    fn colour_follows_the_flag_then_no_color_then_the_terminal() {
        assert!(color_allowed(Some(ColorArg::Always), false, Some("1")));
        assert!(!color_allowed(Some(ColorArg::Never), true, None));
        assert!(color_allowed(None, true, None));
        assert!(color_allowed(Some(ColorArg::Auto), true, Some("")));
        assert!(!color_allowed(None, true, Some("1")), "NO_COLOR");
        assert!(!color_allowed(None, false, None), "not a terminal");
        assert_eq!(prefix("warning", false), "forgestate: warning: ");
        assert!(prefix("error", true).contains(RED));
    }
}
