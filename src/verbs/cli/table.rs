//! Human output for operators: tables (tab-separated when piped, aligned and fitted to the width
//! at a terminal, as gh's), and relative ages. Pure string building;
//! each verb's `show` decides when to use it.

use chrono::{DateTime, Utc};

const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// A colour for one cell of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Bold red: stalled, conflicted.
    Red,
    /// Bold yellow: a warning.
    Yellow,
    /// Green: alive.
    Green,
    /// Dim: paused, completed, ended.
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

/// How a table is printed, as gh prints its tables: piped, one line per row with the cells
/// separated by tabs, unpadded and without a header (for `cut -f`, `awk -F'\t'`); on a
/// terminal, aligned under a header and fitted to the terminal's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Tab-separated rows, no header.
    Piped,
    /// Aligned columns under a header, at most this many characters wide.
    Terminal(usize),
}

/// How a column gives way when a table is wider than the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Free text (a time, a detail, blockers): cut first, down to its header or 12 characters,
    /// and past that, when the table still does not fit, down to its header or 8 (so an age,
    /// `just now`, is never cut).
    Text,
    /// A name a reader may still want whole (a phase, a resume point): cut only after every
    /// free-text column is at its floor, never below its header or 12 characters.
    Name,
    /// An identifier (agent, session, a comment id, a verdict): never cut. When the table cannot
    /// fit otherwise, the line takes the width the identifiers need.
    Whole,
}

/// One column of a table: its header and how it gives way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Its header.
    pub title: &'static str,
    /// How it gives way.
    pub fit: Fit,
}

/// A free-text column (see [`Fit::Text`]).
pub const fn text(title: &'static str) -> Column {
    Column {
        title,
        fit: Fit::Text,
    }
}

/// A name column (see [`Fit::Name`]).
pub const fn name(title: &'static str) -> Column {
    Column {
        title,
        fit: Fit::Name,
    }
}

/// An identifier column (see [`Fit::Whole`]).
pub const fn whole(title: &'static str) -> Column {
    Column {
        title,
        fit: Fit::Whole,
    }
}

/// `rows` (with `columns`' headers on a terminal, bold when `color`) in `layout`.
pub fn lay_out(columns: &[Column], rows: &[Vec<String>], layout: Layout, color: bool) -> String {
    match layout {
        Layout::Piped => rows
            .iter()
            .map(|row| {
                let cells: Vec<String> = row.iter().take(columns.len()).map(|c| plain(c)).collect();
                format!("{}\n", cells.join("\t"))
            })
            .collect(),
        Layout::Terminal(width) => {
            let rows: Vec<Vec<String>> = rows
                .iter()
                .map(|row| row.iter().map(|c| plain(c)).collect())
                .collect();
            render_within(columns, &rows, color, width)
        }
    }
}

/// A cell with every control character (tab, line breaks, ESC, the C1 controls) and every
/// bidirectional control or invisible character as a space: a record's text (a seed agent's
/// phase, a comment an issue writer edited) can neither add a column, send escape sequences to
/// the reader's terminal, nor reorder the row.
fn plain(cell: &str) -> String {
    super::printable(cell).replace(['\n', '\t'], " ")
}

/// The column widths that fit in `max`, as gh's tables fit: free-text columns give way first,
/// then names, each time the widest column one character at a time (so two wide columns end
/// level), down to a floor (see [`Fit`]); identifiers never do. A cut cell ends in `…`.
fn fit(natural: Vec<usize>, columns: &[Column], max: usize) -> Vec<usize> {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    let header = |i: usize| cols(columns[i].title);
    let mut widths = natural;
    // Each pass: which columns may give way, and the least they keep besides their header.
    let passes = [(Fit::Text, 12), (Fit::Name, 12), (Fit::Text, 8)];
    for (kind, floor) in passes {
        let floors: Vec<usize> = (0..widths.len())
            .map(|i| {
                if columns[i].fit == kind {
                    widths[i].min(header(i).max(floor))
                } else {
                    widths[i]
                }
            })
            .collect();
        while total(&widths) > max {
            let Some((i, _)) = widths
                .iter()
                .enumerate()
                .filter(|&(i, &w)| w > floors[i])
                .max_by_key(|&(i, &w)| (w, std::cmp::Reverse(i)))
            else {
                break;
            };
            widths[i] -= 1;
        }
    }
    widths
}

/// How many terminal columns `text` takes: two for wide (CJK, emoji) characters, none for
/// combining marks.
fn cols(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `cell` cut to `width` columns, the last one `…` when anything was cut. A combining mark
/// stays with the character before it.
fn truncate(cell: &str, width: usize) -> String {
    if cols(cell) <= width {
        return cell.to_string();
    }
    let room = width.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    for c in cell.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// Lays rows out in columns separated by two spaces, under the headers (bold when `color`),
/// within `max` characters when the identifiers allow. The last column is not padded, so lines
/// carry no trailing blanks.
fn render_within(spec: &[Column], rows: &[Vec<String>], color: bool, max: usize) -> String {
    let header: Vec<&str> = spec.iter().map(|c| c.title).collect();
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| cols(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cols(cell));
        }
    }
    let widths = fit(widths, spec, max);
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, cell) in cells.enumerate().take(columns) {
            let cell = truncate(cell, widths[i]);
            if i + 1 == columns {
                text.push_str(&cell);
            } else {
                let pad = widths[i].saturating_sub(cols(&cell));
                text.push_str(&cell);
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
