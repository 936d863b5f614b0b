//! Turning flag values into data: inline JSON, `-` for stdin, files (read up to what a record
//! can hold), `--set key=value`, globs and `--since` times. Mistakes are `InputError`s.

use std::io::Read;
use std::path::PathBuf;

use serde_json::{Map, Value};

use forgestate::verbs;

/// A flag value the user must fix. `usage` errors exit 64, the others 65 (bad data) or 74 (IO).
#[derive(Debug)]
pub enum InputError {
    Usage(String),
    Data(String),
    Io(String),
}

/// Reads `-` from stdin, a file, or takes the text itself.
pub fn read_input(
    inline: Option<&str>,
    file: Option<&PathBuf>,
) -> Result<Option<String>, InputError> {
    let read_stdin = || {
        let bytes = read_capped(std::io::stdin(), "stdin")?;
        utf8("stdin", bytes)
    };
    match (inline, file) {
        (Some("-"), _) => read_stdin().map(Some),
        (Some(text), _) => Ok(Some(text.to_string())),
        (None, Some(path)) if path.as_os_str() == "-" => read_stdin().map(Some),
        (None, Some(path)) => {
            let shown = path.display().to_string();
            let file = std::fs::File::open(path)
                .map_err(|e| InputError::Io(format!("cannot read {shown}: {e}")))?;
            let bytes = read_capped(file, &shown)?;
            utf8(&shown, bytes).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// Reads at most what a record could ever hold (the 1 MiB body cap): `/dev/zero` or an endless
/// pipe is refused instead of exhausting memory.
fn read_capped(input: impl Read, source: &str) -> Result<Vec<u8>, InputError> {
    let cap = forgestate::format::HARD_MAX_BODY_BYTES;
    let mut bytes = Vec::new();
    input
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::Io(format!("cannot read {source}: {e}")))?;
    if bytes.len() > cap {
        return Err(InputError::Data(format!(
            "{source} is over {cap} bytes, more than any record can hold; store file paths, \
             not file contents"
        )));
    }
    Ok(bytes)
}

/// Input text must be UTF-8; `source` names where it came from. Bad bytes are bad data (65).
fn utf8(source: &str, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        InputError::Data(format!(
            "{source} is not valid UTF-8 (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Parses a JSON object given on the command line; `what` names the flag in errors. The check
/// is the library's ([`forgestate::verbs::input`]), which every face shares.
pub fn json_object(what: &str, text: Option<String>) -> Result<Map<String, Value>, InputError> {
    match text {
        None => Ok(Map::new()),
        Some(text) => verbs::input::json_object(what, &text).map_err(from_library),
    }
}

/// A library check's error as a flag error: usage errors exit 64, bad data 65, IO 74.
fn from_library(e: forgestate::Error) -> InputError {
    match e.category() {
        forgestate::Category::Usage => InputError::Usage(e.to_string()),
        forgestate::Category::Io => InputError::Io(e.to_string()),
        _ => InputError::Data(e.to_string()),
    }
}

/// Applies `--set KEY=VALUE` pairs. VALUE is JSON when it parses (`42`, `true`, `[1,2]`,
/// `"quoted"`), otherwise the literal string.
pub fn apply_sets(data: &mut Map<String, Value>, sets: &[String]) -> Result<(), InputError> {
    for set in sets {
        let Some((key, value)) = set.split_once('=') else {
            return Err(InputError::Usage(format!(
                "--set {set:?} has no '='; write it as --set key=value"
            )));
        };
        if key.is_empty() {
            return Err(InputError::Usage(format!("--set {set:?} has an empty key")));
        }
        let value =
            serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        data.insert(key.to_string(), value);
    }
    Ok(())
}

/// `--since`: an RFC 3339 time, or an age (`90m`, `24h`, `7d`) counted back from now.
#[cfg(test)]
pub fn parse_since(text: &str) -> Result<chrono::DateTime<chrono::Utc>, InputError> {
    verbs::input::parse_since("--since", text).map_err(from_library)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        assert!(matches!(
            apply_sets(&mut Map::new(), &["novalue".into()]),
            Err(InputError::Usage(_))
        ));
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
            let data = json_object("--data", Some(format!("{{\"n\": {text}}}")))
                .unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(set, data, "{text}");
            assert!(set["n"].is_number(), "{text}");
        }
        let mut set = Map::new();
        apply_sets(&mut set, &["big=18446744073709551616".into()]).unwrap();
        assert_eq!(set["big"].to_string(), "18446744073709551616");
    }

    #[test]
    fn input_must_be_utf8() {
        assert_eq!(utf8("stdin", b"{}".to_vec()).unwrap(), "{}");
        match utf8("data.json", b"{\"k\": \"\xff\"}".to_vec()) {
            Err(InputError::Data(msg)) => {
                assert!(
                    msg.starts_with("data.json is not valid UTF-8 (invalid byte at offset 7)"),
                    "{msg}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn since_takes_times_and_ages() {
        let t = parse_since("2026-11-29T08:00:00Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-29T08:00:00+00:00");
        let age = chrono::Utc::now() - parse_since("24h").unwrap();
        assert!((age.num_minutes() - 24 * 60).abs() <= 1);
        assert!(parse_since("last week").is_err());
    }

    #[test]
    fn data_must_be_an_object() {
        assert!(matches!(
            json_object("--data", Some("[1]".into())),
            Err(InputError::Data(_))
        ));
        assert!(matches!(
            json_object("--data", Some("{".into())),
            Err(InputError::Data(_))
        ));
        assert_eq!(json_object("--data", None).unwrap(), Map::new());
    }
}
