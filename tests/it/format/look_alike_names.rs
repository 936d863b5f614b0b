//! Look-alike names are refused (issue #18, class 4): every character that renders blank or
//! invisible, in every name field (agent, session, phase, status, next check), on the write path
//! and in the check a record read from elsewhere gets before it leaves again.

use forgestate::format::{FieldError, Record, spoofing_char};
use serde_json::json;

/// Characters that render as nothing or as a blank: white space other than the plain space,
/// default-ignorable code points, format controls, the braille blank, Egyptian hieroglyph
/// blanks and format controls, hangul fillers.
const BLANKS: [char; 22] = [
    '\u{00A0}',
    '\u{1680}',
    '\u{2002}',
    '\u{2009}',
    '\u{200A}',
    '\u{202F}',
    '\u{205F}',
    '\u{3000}',
    '\u{2800}',
    '\u{13441}',
    '\u{13430}',
    '\u{13455}',
    '\u{115F}',
    '\u{FFA0}',
    '\u{180E}',
    '\u{2064}',
    '\u{FFF0}',
    '\u{1D173}',
    '\u{E0020}',
    '\u{FE0F}',
    '\u{200B}',
    '\u{034F}',
];

fn refused(result: Result<Record, forgestate::format::BuildError>, c: char, field: &str) {
    match result {
        Err(forgestate::format::BuildError::Field(FieldError::Spoofing {
            field: f, code, ..
        })) => {
            assert_eq!((f, code), (field, c as u32), "U+{:04X}", c as u32)
        }
        other => panic!("U+{:04X} in {field}: {other:?}", c as u32),
    }
}

#[test]
fn every_blank_character_is_refused_in_every_name_field() {
    for c in BLANKS {
        for name in [format!("agent{c}"), format!("ag{c}ent")] {
            refused(Record::checkpoint(&name, "s", "p", json!({})), c, "agent");
            refused(Record::checkpoint("w", &name, "p", json!({})), c, "session");
            refused(Record::checkpoint("w", "s", &name, json!({})), c, "phase");
            refused(
                Record::health("w", "s", &name, json!({}), None),
                c,
                "status",
            );
            refused(
                Record::health("w", "s", "Active", json!({}), Some(&name)),
                c,
                "next check",
            );
            assert_eq!(spoofing_char(&name), Some(c));
        }
    }
}

#[test]
fn the_message_names_the_character_and_what_to_do() {
    let err = Record::checkpoint("agent\u{2800}", "s", "p", json!({})).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("U+2800") && msg.contains("braille blank"),
        "{msg}"
    );
    assert!(msg.contains("remove it"), "{msg}");
}

#[test]
fn ordinary_names_in_any_script_are_kept() {
    for ok in [
        "implementation-worker",
        "café",
        "агент",
        "エージェント",
        "agent 🚀",
        "𓀀-scribe",
    ] {
        assert!(Record::checkpoint(ok, ok, ok, json!({})).is_ok(), "{ok}");
        assert_eq!(spoofing_char(ok), None);
    }
}

#[test]
fn a_record_read_from_elsewhere_with_a_blank_name_fails_its_check() {
    let mut record = Record::checkpoint("agent", "s", "p", json!({})).unwrap();
    record.agent = "agent\u{13441}".into();
    assert!(record.check().is_err());
}
