//! Property tests: render then parse is the identity, and parse never panics.

use crate::common;
use forgestate::format::{Renderer, parse};
use proptest::prelude::*;

/// One renderer for every case: building it compiles the templates, which is most of a case's
/// cost in a debug build.
static RENDERER: std::sync::LazyLock<Renderer> =
    std::sync::LazyLock::new(|| Renderer::embedded().expect("the built-in templates compile"));

/// Cases per property: 512 in CI; set `FORGESTATE_FUZZ_CASES=100000` for a fuzzing run.
fn cases() -> u32 {
    std::env::var("FORGESTATE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn render_then_parse_is_identity(record in common::record()) {
        let body = RENDERER.render(&record).unwrap();
        prop_assert_eq!(parse(&body).unwrap(), record);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_format_shaped_noise(
        text in "(\\[CHECKPOINT\\]|\\[HEALTH\\]|Version: |Time: |Id: |Seq: |```json|```|~~~|\n|\r\n| |[a-z0-9:{}\\[\\]\",.>-]){0,80}"
    ) {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_mutated_bodies(
        record in common::record(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, "\\PC{0,8}|\n|\r|```|\u{feff}"), 1..6),
    ) {
        let mut body = RENDERER.render(&record).unwrap();
        for (at, op, text) in edits {
            let boundaries: Vec<usize> =
                body.char_indices().map(|(i, _)| i).chain([body.len()]).collect();
            let i = boundaries[at.index(boundaries.len())];
            match op {
                0 => body.insert_str(i, &text),
                1 => body.truncate(i),
                2 => {
                    let end = boundaries.iter().copied().find(|&b| b >= i + 8).unwrap_or(body.len());
                    body.replace_range(i..end, "");
                }
                _ => {
                    let line = body[i..].lines().next().unwrap_or("").to_string();
                    body.insert_str(i, &format!("{line}\n"));
                }
            }
            let _ = parse(&body);
        }
    }
}

#[test]
fn deep_nesting_is_refused_with_a_reason_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let body = format!(
        "[CHECKPOINT] a\nVersion: 1.0\nPhase: p\nSession: s\nTime: 2026-01-01T00:00:00Z\n\n```json\n{deep}\n```"
    );
    let err = parse(&body).unwrap_err();
    assert_eq!(err.code(), "bad_json");
    assert!(err.to_string().contains("recursion limit"), "{err}");
    let quotes = format!("{}[CHECKPOINT] a", "> ".repeat(50_000));
    assert_eq!(parse(&quotes).unwrap_err().code(), "no_marker");
    let lists = format!("[CHECKPOINT] a\n{}", "- ".repeat(20_000));
    assert!(parse(&lists).is_err());
}
