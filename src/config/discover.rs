//! Where the configuration comes from: the documented precedence (flag, environment, working
//! directory, XDG) and the user's own file as the layer under a working-directory one.

use std::path::{Path, PathBuf};

use super::ConfigFile;
use crate::error::{Error, Result};

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Named by `--config`.
    Flag(PathBuf),
    /// Named by `$FORGESTATE_CONFIG`.
    Env(PathBuf),
    /// `forgestate.toml` in the working directory.
    WorkingDir(PathBuf),
    /// `forgestate/config.toml` under `$XDG_CONFIG_HOME`.
    Xdg(PathBuf),
    /// No file: the built-in defaults.
    BuiltIn,
}

impl Origin {
    /// The file, unless the configuration is built in.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Origin::Flag(p) | Origin::Env(p) | Origin::WorkingDir(p) | Origin::Xdg(p) => Some(p),
            Origin::BuiltIn => None,
        }
    }
}

/// Picks the configuration file by the documented precedence. `env` reads environment
/// variables and `cwd` is the working directory, so tests can pass their own.
pub fn discover(flag: Option<&Path>, env: &dyn Fn(&str) -> Option<String>, cwd: &Path) -> Origin {
    if let Some(path) = flag {
        return Origin::Flag(path.to_path_buf());
    }
    if let Some(path) = env("FORGESTATE_CONFIG").filter(|p| !p.is_empty()) {
        return Origin::Env(PathBuf::from(path));
    }
    let local = cwd.join("forgestate.toml");
    if local.is_file() {
        return Origin::WorkingDir(local);
    }
    match xdg_file(env) {
        Some(path) => Origin::Xdg(path),
        None => Origin::BuiltIn,
    }
}

/// The user's own configuration file, `$XDG_CONFIG_HOME/forgestate/config.toml` (falling back
/// to `~/.config`), when it exists.
pub(super) fn xdg_file(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let xdg = env("XDG_CONFIG_HOME")
        .filter(|p| Path::new(p).is_absolute())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")));
    xdg.map(|d| d.join("forgestate").join("config.toml"))
        .filter(|p| p.is_file())
}

/// The user's configuration as the layer under a working-directory file: a checkout's
/// `forgestate.toml` tunes the operator's settings, it never replaces them (so the forge, the
/// token file and trust still come from the operator). Its relative paths are made absolute
/// against its own directory, since the layer above resolves against another.
pub(super) fn user_layer(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<ConfigFile>> {
    let Some(path) = xdg_file(env) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::config(format!("cannot read config file {}: {e}", path.display())))?;
    let mut file = ConfigFile::parse(&text, &path.display().to_string())?;
    let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let abs = |p: &mut Option<PathBuf>| {
        if let Some(v) = p.as_mut() {
            *v = dir.join(&*v);
        }
    };
    abs(&mut file.local.dir);
    abs(&mut file.format.templates_dir);
    if let Some(forge) = file.forge.as_mut() {
        abs(&mut forge.token_file);
        abs(&mut forge.cache_dir);
        abs(&mut forge.outbox_dir);
    }
    Ok(Some(file))
}
