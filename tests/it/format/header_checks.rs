//! Write-side checks of header values and the body cap: nothing may end a header line, hide in
//! it, or make a name a glob.

use forgestate::format::{
    FieldError, GLOB_CHARS, HARD_MAX_BODY_BYTES, MAX_FIELD_CHARS, check_body_cap, check_field,
    check_name, is_invisible, spoofing_char,
};

#[test]
fn refuses_header_injection() {
    let err = check_field("session", "x\nPhase: evil").unwrap_err();
    assert_eq!(
        err,
        FieldError::ControlChar {
            field: "session",
            code: 10,
            index: 1
        }
    );
    assert!(check_field("session", "x\r").is_err());
    assert!(check_field("session", "x\u{2028}y").is_err());
}

#[test]
fn refuses_empty_long_padded_and_fenced() {
    assert!(matches!(
        check_field("agent", ""),
        Err(FieldError::Empty { .. })
    ));
    let long = "a".repeat(MAX_FIELD_CHARS + 1);
    assert!(matches!(
        check_field("agent", &long),
        Err(FieldError::TooLong { chars: 201, .. })
    ));
    assert!(check_field("agent", &"é".repeat(MAX_FIELD_CHARS)).is_ok());
    assert!(matches!(
        check_field("phase", " a"),
        Err(FieldError::EdgeWhitespace { .. })
    ));
    assert!(matches!(
        check_field("phase", "a```json"),
        Err(FieldError::Fence { .. })
    ));
    assert!(check_field("phase", "subtask_3_complete: ok [x]").is_ok());
}

#[test]
fn refuses_bidi_controls_and_invisible_characters() {
    for c in [
        '\u{202A}',
        '\u{202B}',
        '\u{202C}',
        '\u{202D}',
        '\u{202E}',
        '\u{2066}',
        '\u{2067}',
        '\u{2068}',
        '\u{2069}',
        '\u{200E}',
        '\u{200F}',
        '\u{061C}',
        '\u{200B}',
        '\u{200C}',
        '\u{200D}',
        '\u{2060}',
        '\u{00AD}',
        '\u{FE0F}',
        '\u{E0041}',
        '\u{3164}',
    ] {
        let value = format!("impl{c}-worker");
        let err = check_field("agent", &value).unwrap_err();
        assert!(
            matches!(err, FieldError::Spoofing { field: "agent", code, index: 4, .. } if code == c as u32),
            "U+{:04X}: {err:?}",
            c as u32
        );
        assert_eq!(spoofing_char(&value), Some(c));
    }
    let msg = check_field("session", "s\u{202E}1")
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("session contains U+202E (a bidirectional"),
        "{msg}"
    );
    for ok in [
        "café-worker",
        "агент",
        "エージェント",
        "agent 🚀",
        "subtask_3: ok",
    ] {
        assert!(check_field("agent", ok).is_ok(), "{ok}");
        assert_eq!(spoofing_char(ok), None);
    }
}

#[test]
fn names_refuse_glob_metacharacters_and_phases_keep_them() {
    for (value, found, index) in [("w[1]", '[', 1), ("build-*", '*', 6), ("a?", '?', 1)] {
        assert_eq!(
            check_name("agent", value),
            Err(FieldError::GlobChar {
                field: "agent",
                found,
                index
            })
        );
    }
    for c in GLOB_CHARS {
        assert!(check_name("session", &format!("s{c}")).is_err(), "{c}");
    }
    let msg = check_name("session", "s{1}").unwrap_err().to_string();
    assert!(
        msg.starts_with("session contains '{' at character 2"),
        "{msg}"
    );
    assert!(check_name("agent", "implementation-worker").is_ok());
    assert!(check_field("phase", "subtask_3_complete: ok [x]").is_ok());
}

#[test]
fn body_cap_is_bounded() {
    assert!(check_body_cap(HARD_MAX_BODY_BYTES).is_ok());
    assert!(check_body_cap(HARD_MAX_BODY_BYTES + 1).is_err());
    assert!(check_body_cap(0).is_err());
}

#[test]
fn blank_and_invisible_characters_are_listed_and_letters_are_not() {
    for c in [
        '\u{2800}',
        '\u{1D159}',
        '\u{13441}',
        '\u{13430}',
        '\u{00A0}',
        '\u{3000}',
        '\u{2009}',
        '\u{200B}',
        '\u{E0041}',
        '\u{FE0F}',
        '\u{180E}',
        '\u{2064}',
        '\u{FFF0}',
        '\u{1D173}',
    ] {
        assert!(is_invisible(c), "U+{:04X}", c as u32);
    }
    for c in ['a', ' ', 'é', 'ж', 'エ', '🚀', '_', '-', '\u{13000}'] {
        assert!(!is_invisible(c), "U+{:04X}", c as u32);
    }
}
