//! The CLI's tables (`forgestate::verbs::cli::table`): ages, alignment, piping, fitting a width
//! without cutting names, and the coloured prefixes.

use chrono::{DateTime, Duration, Utc};

use forgestate::verbs::cli::table::{
    Column, Layout, lay_out, name, prefix, relative_age, text, whole,
};

/// How many terminal columns `text` takes.
fn cols(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

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

const ID_KIND_WHAT: [Column; 3] = [whole("ID"), whole("KIND"), text("WHAT")];

#[test]
fn columns_align_under_a_header() {
    let rows = vec![
        vec!["7".to_string(), "checkpoint".into(), "phase=a".into()],
        vec!["1234".to_string(), "health".into(), "status=Active".into()],
    ];
    let text = lay_out(&ID_KIND_WHAT, &rows, Layout::Terminal(80), false);
    assert_eq!(
        text,
        "ID    KIND        WHAT\n7     checkpoint  phase=a\n1234  health      status=Active\n"
    );
    let bold = lay_out(&[whole("ID")], &[], Layout::Terminal(80), true);
    assert_eq!(bold, "\x1b[1mID\x1b[0m\n");
}

#[test]
fn piped_tables_are_tab_separated_unpadded_and_headless() {
    let rows = vec![
        vec!["7".to_string(), "checkpoint".into(), "phase=a\tb".into()],
        vec!["1234".to_string(), "health".into(), "status=Active".into()],
    ];
    let text = lay_out(&ID_KIND_WHAT, &rows, Layout::Piped, false);
    assert_eq!(
        text,
        "7\tcheckpoint\tphase=a b\n1234\thealth\tstatus=Active\n"
    );
}

#[test]
fn cells_hand_the_terminal_no_controls_and_no_reordering() {
    let rows = vec![vec![
        "s\u{202E}1".to_string(),
        "a\x1b[31mb\u{200B}c".to_string(),
    ]];
    let text = lay_out(
        &[whole("SESSION"), text("DETAIL")],
        &rows,
        Layout::Piped,
        false,
    );
    assert_eq!(text, "s 1\ta [31mb c\n");
}

#[test]
fn wide_characters_take_two_columns_and_accents_none() {
    let rows = vec![
        vec!["工作者".to_string(), "detail".into()],
        vec!["w".to_string(), "x".into()],
    ];
    let text = lay_out(
        &[whole("AGENT"), text("DETAIL")],
        &rows,
        Layout::Terminal(80),
        false,
    );
    let starts: Vec<usize> = text
        .lines()
        .map(|l| {
            let i = l.find(['d', 'x', 'D']).unwrap();
            cols(&l[..i])
        })
        .collect();
    assert_eq!(starts, [8, 8, 8], "the second column lines up: {text}");
}

fn widths_ok(text: &str, max: usize) {
    for line in text.lines() {
        assert!(cols(line) <= max, "{line:?} ({})", cols(line));
    }
}

#[test]
fn terminal_tables_fit_the_width_cutting_free_text_first() {
    let long = "x".repeat(60);
    let rows = vec![vec![
        "alive".to_string(),
        long.clone(),
        "just now".into(),
        "y".repeat(30),
    ]];
    let header = [
        whole("VERDICT"),
        whole("AGENT"),
        text("LAST"),
        text("DETAIL"),
    ];
    let text = lay_out(&header, &rows, Layout::Terminal(90), false);
    widths_ok(&text, 90);
    let row = text.lines().nth(1).unwrap();
    assert!(row.contains(&long), "an identifier is never cut: {text}");
    assert!(
        row.ends_with("just now  yyyyyyyy…"),
        "the detail gives way: {text}"
    );
    // Narrower than the identifiers need: they keep their width, the rest is at its floor.
    let text = lay_out(&header, &rows, Layout::Terminal(60), false);
    let row = text.lines().nth(1).unwrap();
    assert!(row.contains(&long), "{text}");
    assert!(
        row.ends_with(&format!("{long}  just now  yyyyyyy…")),
        "an age keeps its 8 characters: {text}"
    );
    // Wide enough: nothing is cut.
    let wide = lay_out(&header, &rows, Layout::Terminal(200), false);
    assert!(wide.contains(&long) && !wide.contains('…'), "{wide}");
}

#[test]
fn names_give_way_only_after_free_text_and_identifiers_never() {
    // The status table at 100 columns, as an operator's terminal shows it: the two agents
    // share their first 15 characters, so a cut made them one.
    let header = [
        whole("VERDICT"),
        whole("AGENT"),
        whole("SESSION"),
        text("LAST"),
        name("PHASE"),
        name("RESUME"),
        text("HEALTH"),
        text("BLOCKERS"),
    ];
    let row = |agent: &str| {
        vec![
            "alive".to_string(),
            agent.to_string(),
            "sess-42".into(),
            "3m ago".into(),
            "subtask_3_complete".into(),
            "phase_2_continue".into(),
            "Active".into(),
            "waiting on review from the platform team; CI flaky".into(),
        ]
    };
    let rows = vec![
        row("implementation-worker"),
        row("implementation-orchestrator"),
    ];
    let text = lay_out(&header, &rows, Layout::Terminal(100), false);
    widths_ok(&text, 100);
    for agent in ["implementation-worker", "implementation-orchestrator"] {
        assert!(text.contains(agent), "{agent} is whole: {text}");
    }
    assert!(text.contains("sess-42"), "{text}");
    assert!(text.contains("BLOCKERS") || text.contains('…'), "{text}");
    // Only when the free text is at its floor do the names give way.
    let text = lay_out(&header, &rows, Layout::Terminal(120), false);
    widths_ok(&text, 120);
    assert!(
        text.contains("subtask_3_complete") && text.contains("phase_2_continue"),
        "names stay whole while free text can give way: {text}"
    );
    let narrow = lay_out(&header, &rows, Layout::Terminal(40), false);
    assert!(narrow.contains("implementation-orchestrator"), "{narrow}");
    assert!(narrow.contains("sess-42"), "{narrow}");
}

#[test]
fn prefixes_are_coloured_only_when_allowed() {
    assert_eq!(prefix("warning", false), "forgestate: warning: ");
    assert!(prefix("error", true).contains("\x1b[1;31m"));
}

/// A cut cell ends in `…` within its width: a wide character is never split, and a combining
/// mark stays with the character before it.
#[test]
fn cells_are_cut_by_the_columns_they_take() {
    let wide = "工作者エージェント".repeat(2);
    let accents = "e\u{301}".repeat(20);
    let rows = vec![vec!["x".to_string(), wide], vec!["y".to_string(), accents]];
    let text = lay_out(
        &[whole("A"), text("DETAIL")],
        &rows,
        Layout::Terminal(15),
        false,
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "x  工作者エー…", "{text}");
    assert_eq!(lines[2], format!("y  {}…", "e\u{301}".repeat(11)), "{text}");
}
