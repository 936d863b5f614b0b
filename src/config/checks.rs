//! Checks on a loaded configuration: values in range, names not empty, paths absolute, and what
//! a file merely found in the working directory may not set.

use std::path::{Path, PathBuf};

use super::ConfigFile;
use crate::error::{Error, Result};
use crate::format::check_body_cap;
use crate::resume::ResumeMap;

/// `path` made absolute against the working directory, so messages show where the store is.
pub(super) fn absolute(path: &Path, source: &str) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| {
        Error::config(format!(
            "{source} {}: cannot make the path absolute: {e}",
            path.display()
        ))
    })
}

/// Checks every configured value that has a range or must not be empty, so a bad value fails
/// when the file is loaded, naming its key, instead of misbehaving (or panicking) later.
pub(super) fn validate(file: &ConfigFile) -> std::result::Result<(), String> {
    if let Some(cap) = file.format.max_body_bytes {
        check_body_cap(cap).map_err(|e| format!("[format] {e}"))?;
    }
    if let Some(author) = &file.local.author
        && author.trim().is_empty()
    {
        return Err("[local] author is empty; set a name or remove the key".to_string());
    }
    if let Some(forge) = &file.forge {
        forge.validate()?;
    }
    ResumeMap::new(&file.resume).map(drop)?;
    crate::report::StatusPolicy::new(&file.status).map(drop)
}

/// A `forgestate.toml` found in the working directory comes with whatever checkout an agent is
/// in, so a branch could carry one. It may tune budgets and templates, but not move trust or the
/// token: whose records count, what is redacted, which forge, repository or token file is used,
/// or where the outbox and cache live. Those belong in a file the operator chose.
pub(super) fn refuse_trust_settings(file: &ConfigFile, path: &Path) -> Result<()> {
    let forge = file.forge.clone().unwrap_or_default();
    let set = [
        ("trusted_authors", !file.trusted_authors.is_empty()),
        ("local.dir", file.local.dir.is_some()),
        ("redact_keys", file.redact_keys.is_some()),
        ("forge.url", forge.url.is_some()),
        ("forge.owner", forge.owner.is_some()),
        ("forge.repo", forge.repo.is_some()),
        ("forge.token_file", forge.token_file.is_some()),
        (
            "forge.allow_insecure_http",
            forge.allow_insecure_http.is_some(),
        ),
        ("forge.outbox_dir", forge.outbox_dir.is_some()),
        ("forge.cache_dir", forge.cache_dir.is_some()),
        ("signing.key_file", file.signing.key_file.is_some()),
        (
            "signing.verify_key_files",
            !file.signing.verify_key_files.is_empty(),
        ),
        (
            "signing.require_signatures",
            file.signing.require_signatures.is_some(),
        ),
    ];
    match set.iter().find(|(_, is_set)| *is_set) {
        Some((key, _)) => Err(Error::setting(
            *key,
            format!(
                "{} sets {key}, which a config file found in the working directory may not (a \
                 checkout could carry it and redirect trust or the token); move it to \
                 ~/.config/forgestate/config.toml, or name the file with --config or \
                 $FORGESTATE_CONFIG",
                path.display()
            ),
        )),
        None => Ok(()),
    }
}
