//! The wait budget and the patience as settings: `--wait`, then `$FORGESTATE_WAIT`, then
//! `[forge] wait`, then the default (3 s); the same for `patience` (60 s). Each is a duration
//! as people write it (`3s`, `500ms`, `2m`).

use std::time::Duration;

use crate::error::{Error, Result};

/// The shortest and longest wait budget accepted.
const WAIT_RANGE: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(3_600));

/// A wait budget as people write it (`3s`, `500ms`, `2m`), checked against its range; `whence`
/// names where it was given.
pub fn parse_wait(text: &str, whence: &str) -> std::result::Result<Duration, String> {
    let wait = humantime::parse_duration(text.trim()).map_err(|e| {
        format!(
            "{whence} = {text:?} is not a duration ({e}); write it like \"3s\", \"500ms\" or \"2m\""
        )
    })?;
    let (min, max) = WAIT_RANGE;
    if !(min..=max).contains(&wait) {
        return Err(format!(
            "{whence} = {text:?} is out of range; use 100ms to 1h"
        ));
    }
    Ok(wait)
}

/// The setting `name` (`wait` or `patience`) in force: the flag (`--wait`, already checked),
/// then `$FORGESTATE_WAIT`, then `[forge] wait`, then `default` (3 s for the wait budget;
/// the patience, how long a command without an answer of its own waits for the forge: 60 s).
pub(super) fn layered(
    name: &str,
    default: Duration,
    flag: Option<Duration>,
    env: Option<&str>,
    file: Option<&str>,
) -> Result<Duration> {
    if let Some(wait) = flag {
        return Ok(wait);
    }
    if let Some(text) = env {
        let var = format!("FORGESTATE_{}", name.to_uppercase());
        return parse_wait(text, &var).map_err(|e| Error::setting(name, e));
    }
    match file {
        Some(text) => parse_wait(text, &format!("[forge] {name}")).map_err(Error::config),
        None => Ok(default),
    }
}
