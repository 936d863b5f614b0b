//! What the kept beginning of a body too large to read says of it.

use forgestate::format::{Kind, marker_in_head};

#[test]
fn the_first_line_decides_when_it_is_whole_or_plainly_no_marker() {
    assert_eq!(marker_in_head("CI run failed\nxxx"), Some(None));
    assert_eq!(
        marker_in_head("\n\nsome log tha"),
        Some(None),
        "cut, but no marker"
    );
    assert_eq!(
        marker_in_head("\u{feff}[CHECKPOINT] review-worker\nPhase: x"),
        Some(Some((Kind::Checkpoint, "review-worker".to_string())))
    );
    assert_eq!(
        marker_in_head("[HEALTH] a\n"),
        Some(Some((Kind::Health, "a".into())))
    );
    assert_eq!(
        marker_in_head("[CHECKPOINT] review-wo"),
        None,
        "the agent is cut"
    );
    assert_eq!(marker_in_head("[CHECK"), None);
    assert_eq!(marker_in_head("\n\n  "), None);
    assert_eq!(
        marker_in_head("[CHECKPOINT]\n"),
        None,
        "a broken marker line"
    );
}
