//! Property tests: render then parse is the identity, and parse never panics.

mod common;

use forgestate::format::{Renderer, parse};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn render_then_parse_is_identity(record in common::record()) {
        let body = Renderer::embedded().unwrap().render(&record).unwrap();
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
        let mut body = Renderer::embedded().unwrap().render(&record).unwrap();
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
