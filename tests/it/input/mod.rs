//! The request checks every face shares (`forgestate::verbs::input`): ages and times, JSON
//! objects given as objects or text, globs, `--set` pairs, UTF-8 input, and a key given twice.

use serde_json::{Map, Value, json};

use forgestate::verbs::input::{
    Repeated, Since, apply_sets, check_glob, json_object, object_or_text, parse_age, read_text,
    repeated_key, since_arg,
};
use forgestate::{Category, Error};

#[test]
fn ages_are_units_summed() {
    assert_eq!(parse_age("90m"), Some(5400));
    assert_eq!(parse_age("24h"), Some(86_400));
    assert_eq!(parse_age("7d"), Some(604_800));
    assert_eq!(parse_age("1h 30m"), Some(5400));
    assert_eq!(parse_age("2weeks"), Some(1_209_600));
    for bad in [
        "",
        "h",
        "10",
        "10x",
        "last week",
        "-1h",
        "99999999999999999999w",
    ] {
        assert_eq!(parse_age(bad), None, "{bad}");
    }
    let age = since_arg("since", "24h").unwrap();
    assert_eq!(age, Since::Age(chrono::Duration::hours(24)));
    let err = since_arg("since", "last week").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("since \"last week\" is neither"),
        "{err}"
    );
}

#[test]
fn objects_name_the_argument_not_a_flag() {
    let err = object_or_text("data", json!([1])).unwrap_err();
    assert!(
        err.to_string().starts_with("data must be a JSON object"),
        "{err}"
    );
    let err = object_or_text("metrics", json!("{fine")).unwrap_err();
    assert!(
        err.to_string().starts_with("metrics is not valid JSON"),
        "{err}"
    );
    assert_eq!(
        object_or_text("data", json!("{\"a\": 1}")).unwrap()["a"],
        json!(1)
    );
    let err = check_glob("agent", Some("impl-[")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("agent \"impl-[\" is not a valid glob")
    );
    assert_eq!(err.category(), Category::Usage);
    let err = check_glob("agent", Some("w\0")).unwrap_err();
    assert_eq!(err.category(), Category::Data, "{err}");
}

#[test]
fn set_values_are_json_when_they_can_be() {
    let mut data = Map::new();
    let sets = [
        "issue_number=42",
        "branch=feat/x",
        "done=[1,2]",
        "q=\"7\"",
        "eq=a=b",
        "n=null",
    ];
    apply_sets(&mut data, &sets.map(String::from)).unwrap();
    assert_eq!(
        Value::Object(data),
        json!({"issue_number": 42, "branch": "feat/x", "done": [1, 2], "q": "7", "eq": "a=b", "n": null})
    );
    let refused = apply_sets(&mut Map::new(), &["novalue".into()]);
    assert!(matches!(refused, Err(Error::Usage { .. })));
}

#[test]
fn numbers_are_kept_exactly_and_set_agrees_with_data() {
    for text in [
        "18446744073709551616",
        "-123456789012345678901234567890",
        "9007199254740993",
        "1e400",
        "-1E400",
        "0.1",
        "1.0",
    ] {
        let mut set = Map::new();
        apply_sets(&mut set, &[format!("n={text}")]).unwrap();
        let data = json_object("--data", &format!("{{\"n\": {text}}}"))
            .unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(set, data, "{text}");
        assert!(set["n"].is_number(), "{text}");
    }
}

#[test]
fn input_must_be_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, b"{}").unwrap();
    assert_eq!(read_text(None, Some(&good)).unwrap().as_deref(), Some("{}"));
    let bad = dir.path().join("data.json");
    std::fs::write(&bad, b"{\"k\": \"\xff\"}").unwrap();
    match read_text(None, Some(&bad)) {
        Err(Error::Invalid { message }) => assert!(
            message.contains("data.json is not valid UTF-8 (invalid byte at offset 7)"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_repeated_key_is_found_with_its_path() {
    assert_eq!(repeated_key(r#"{"a": 1, "b": {"c": [1, {"d": 2}]}}"#), None);
    assert_eq!(repeated_key("[1, 2]"), None);
    assert_eq!(repeated_key("not json"), None);
    let top = repeated_key(r#"{"a": 1, "a": 2}"#).unwrap();
    assert_eq!(
        top,
        Repeated {
            key: "a".into(),
            at: String::new()
        }
    );
    assert_eq!(
        top.describe("--data"),
        "--data has the key \"a\" twice; JSON with a repeated key is ambiguous (one value \
         would be dropped without a word), so give each key once"
    );
    let deep = repeated_key(r#"{"x": {"y": [0, {"k": 1, "k": 1}]}}"#).unwrap();
    assert_eq!(deep.at, "x.y[1]");
    assert!(
        deep.describe("data")
            .starts_with("data has the key \"k\" twice (in x.y[1]);")
    );
    let escaped = repeated_key(r#"{"a": 1, "\u0061": 2}"#).unwrap();
    assert_eq!(escaped.key, "a", "an escaped spelling is the same key");
    let in_array = repeated_key(r#"[{"a": 1, "a": 2}]"#).unwrap();
    assert_eq!(in_array.at, "[0]");
    let refused = json_object("--data", r#"{"a": 1, "a": 2}"#).unwrap_err();
    assert_eq!(refused.category(), Category::Data, "exit 65 on the CLI");
    assert!(
        refused
            .to_string()
            .starts_with("--data has the key \"a\" twice")
    );
    // Big numbers (arbitrary_precision) and the same key in sibling objects are fine.
    assert_eq!(
        repeated_key(r#"[{"n": 18446744073709551616}, {"n": 1.5}]"#),
        None
    );
}
