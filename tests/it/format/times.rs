//! Record timestamps: one way to write them, the lenient ways to read them.

use forgestate::format::{Record, Renderer, format_time, parse, parse_time};
use serde_json::json;

#[test]
fn writes_microseconds_and_z() {
    let t = parse_time("2026-11-29T08:40:58Z").unwrap();
    assert_eq!(format_time(&t), "2026-11-29T08:40:58.000000Z");
}

#[test]
fn reads_seed_forms_and_offsets() {
    let a = parse_time("2026-11-29T08:40:58.123456Z").unwrap();
    let b = parse_time("2026-11-29T09:40:58.123456+01:00").unwrap();
    let c = parse_time("2026-11-29T08:40:58.123456+00:00Z").unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(format_time(&a), "2026-11-29T08:40:58.123456Z");
    assert!(
        parse_time("2026-11-29T08:40:58").is_err(),
        "naive time has no zone"
    );
    assert!(parse_time("yesterday").is_err());
}

#[test]
fn posted_at_reads_rfc_3339_and_refuses_anything_else() {
    let record = Record::checkpoint("a", "s", "p", json!({})).unwrap();
    let body = Renderer::embedded().unwrap().render(&record).unwrap();
    let with = |value: &str| {
        body.replacen(
            "\nSession: s\n",
            &format!("\nSession: s\nPosted-At: {value}\n"),
            1,
        )
    };
    let t = parse(&with("2026-07-14T09:47:31Z")).unwrap().posted_at;
    assert_eq!(t.map(|t| t.timestamp()), Some(1_784_022_451));
    assert_eq!(parse(&body).unwrap().posted_at, None);
    let bad = parse(&with("yesterday")).unwrap_err();
    assert_eq!(bad.code(), "bad_field");
    assert!(bad.to_string().contains("posted-at"), "{bad}");
}
