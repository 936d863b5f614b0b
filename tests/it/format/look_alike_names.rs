//! Look-alike names are refused (issue #18, class 4): every character that renders blank or
//! invisible, in every name field (agent, session, phase, status, next check), on the write path
//! and in the check a record read from elsewhere gets before it leaves again; and a new name that
//! mixes look-alike scripts, stacks marks, uses a compatibility form or passes for ASCII.

use std::borrow::Cow;

use forgestate::format::{FieldError, LookAlike, Record, check_new_name, nfc, spoofing_char};
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

/// What the check of a new name finds it could pass for, if anything.
fn look_alike(name: &str) -> Option<LookAlike> {
    match check_new_name("agent", name) {
        Ok(()) => None,
        Err(FieldError::LookAlike { found, .. }) => Some(found),
        Err(other) => panic!("{name:?}: {other}"),
    }
}

#[test]
fn nfc_makes_one_name_of_its_two_spellings() {
    let composed = "caf\u{e9}";
    let decomposed = "cafe\u{301}";
    assert_eq!(nfc(decomposed), composed);
    assert!(matches!(nfc(composed), Cow::Borrowed(_)));
    assert!(matches!(nfc("implementation-worker"), Cow::Borrowed(_)));
}

#[test]
fn mixed_scripts_and_stacked_marks_are_found() {
    for fine in [
        "implementation-worker",
        "café-worker",
        "работник-1",
        "εργάτης",
        "作業者-1",
        "ワーカー_日本",
        "agent-日本",
        "ti\u{1EBF}ng-vi\u{1EC7}t",
    ] {
        assert_eq!(look_alike(&nfc(fine)), None, "{fine}");
    }
    assert!(matches!(
        look_alike("\u{430}gent"),
        Some(LookAlike::MixedScript {
            first: "Latin",
            script: "Cyrillic",
            index: 0,
            ..
        })
    ));
    assert_eq!(
        look_alike("ag\u{435}nt"),
        Some(LookAlike::MixedScript {
            code: 0x435,
            script: "Cyrillic",
            first: "Latin",
            index: 2
        })
    );
    assert!(matches!(
        look_alike("\u{3bf}pen"),
        Some(LookAlike::MixedScript {
            first: "Latin",
            script: "Greek",
            ..
        })
    ));
    assert!(matches!(
        look_alike(&nfc("e\u{301}\u{301}")),
        Some(LookAlike::StackedMarks {
            code: 0x301,
            index: 1,
            repeated: true
        })
    ));
    assert_eq!(
        look_alike("e\u{301}\u{301}"),
        Some(LookAlike::StackedMarks {
            code: 0x301,
            index: 2,
            repeated: true
        })
    );
    let zalgo = "a\u{300}\u{316}\u{35c}";
    assert!(matches!(
        look_alike(zalgo),
        Some(LookAlike::StackedMarks {
            index: 3,
            repeated: false,
            ..
        })
    ));
    assert_eq!(look_alike("a\u{300}\u{316}"), None, "two marks may stand");
}

#[test]
fn compatibility_forms_and_names_that_pass_for_ascii_are_found() {
    let compatible = |name: &str| match look_alike(&nfc(name)) {
        Some(LookAlike::Compatibility { plain, index, .. }) => Some((plain, index)),
        _ => None,
    };
    assert_eq!(compatible("\u{ff57}orker"), Some(("w".into(), 0)));
    assert_eq!(compatible("\u{1d430}orker"), Some(("w".into(), 0)));
    assert_eq!(compatible("\u{fb01}le"), Some(("fi".into(), 0)));
    assert_eq!(compatible("\u{2160}mpl"), Some(("I".into(), 0)));
    let ascii = |name: &str| match look_alike(&nfc(name)) {
        Some(LookAlike::PassesForAscii { like, index, .. }) => Some((like, index)),
        _ => None,
    };
    assert_eq!(ascii("\u{251}gent"), Some(("a".into(), 0)));
    assert_eq!(ascii("\u{430}\u{440}\u{435}"), Some(("a".into(), 0)));
    assert_eq!(ascii("agent\u{2010}x"), Some(("-".into(), 5)));
}
