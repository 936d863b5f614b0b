//! The command line's ways to give a value: inline, `-` for stdin, or a file (read up to what a
//! record can hold, as UTF-8), and `--set key=value` laid on a JSON object.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Reads `-` from stdin, a file, or takes the text itself; `None` when neither is given.
pub fn read_text(inline: Option<&str>, file: Option<&Path>) -> Result<Option<String>> {
    let read_stdin = || {
        let bytes = read_capped(std::io::stdin(), Path::new("stdin"))?;
        utf8("stdin", bytes)
    };
    match (inline, file) {
        (Some("-"), _) => read_stdin().map(Some),
        (Some(text), _) => Ok(Some(text.to_string())),
        (None, Some(path)) if path.as_os_str() == "-" => read_stdin().map(Some),
        (None, Some(path)) => {
            let file = std::fs::File::open(path).map_err(|e| Error::io("cannot read", path, e))?;
            let bytes = read_capped(file, path)?;
            utf8(&path.display().to_string(), bytes).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// Reads at most what a record could ever hold (the 1 MiB body cap): `/dev/zero` or an endless
/// pipe is refused instead of exhausting memory.
fn read_capped(input: impl Read, source: &Path) -> Result<Vec<u8>> {
    let cap = crate::format::HARD_MAX_BODY_BYTES;
    let mut bytes = Vec::new();
    input
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("cannot read", source, e))?;
    if bytes.len() > cap {
        return Err(Error::invalid(format!(
            "{} is over {cap} bytes, more than any record can hold; store file paths, not file \
             contents",
            source.display()
        )));
    }
    Ok(bytes)
}

/// Input text must be UTF-8; `source` names where it came from. Bad bytes are bad data.
fn utf8(source: &str, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        Error::invalid(format!(
            "{source} is not valid UTF-8 (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Applies `--set KEY=VALUE` pairs. VALUE is JSON when it parses (`42`, `true`, `[1,2]`,
/// `"quoted"`), otherwise the literal string.
pub fn apply_sets(data: &mut Map<String, Value>, sets: &[String]) -> Result<()> {
    for set in sets {
        let Some((key, value)) = set.split_once('=') else {
            return Err(Error::usage(format!(
                "--set {set:?} has no '='; write it as --set key=value"
            )));
        };
        if key.is_empty() {
            return Err(Error::usage(format!("--set {set:?} has an empty key")));
        }
        let value =
            serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        data.insert(key.to_string(), value);
    }
    Ok(())
}
