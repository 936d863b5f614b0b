//! Durations as people write them (`--wait 3s`, `[forge] patience = "2m"`), within the range,
//! and a refusal that names where the value came from.

use std::time::Duration;

use forgestate::config::parse_wait;

#[test]
fn durations_as_people_write_them_within_the_range() {
    assert_eq!(parse_wait("3s", "x"), Ok(Duration::from_secs(3)));
    assert_eq!(parse_wait(" 500ms ", "x"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_wait("2m", "x"), Ok(Duration::from_secs(120)));
    for bad in ["soon", "", "3", "-1s"] {
        let e = parse_wait(bad, "--wait").unwrap_err();
        assert!(
            e.contains("--wait") && e.contains("not a duration"),
            "{bad}: {e}"
        );
    }
    for out in ["0s", "99ms", "2h"] {
        let e = parse_wait(out, "[forge] wait").unwrap_err();
        assert!(e.contains("out of range"), "{out}: {e}");
    }
}
