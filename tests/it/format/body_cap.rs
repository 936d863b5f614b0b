//! The body cap holds for the request the server receives, JSON escaping included.

use forgestate::format::{Record, RenderError, Renderer, Templates};

#[test]
fn the_cap_holds_for_the_escaped_request() {
    // 40 KiB of quotes and backslashes: about 80 KiB in the body (JSON-escaped once inside the
    // fence) and about 160 KiB in the request (escaped again).
    let nasty = "\"\\".repeat(20 * 1024);
    let record = Record::checkpoint("a", "s", "p", serde_json::json!({ "x": nasty })).unwrap();
    let renderer = Renderer::new(Templates::embedded(), 128 * 1024).unwrap();
    match renderer.render(&record) {
        Err(RenderError::TooLarge { len, cap }) => {
            assert!(len > cap);
            assert_eq!(cap, 128 * 1024);
        }
        other => panic!("a request over the cap must be refused: {other:?}"),
    }
}
