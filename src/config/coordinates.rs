//! The forge's owner and repository name, from the flags, the environment and the `[forge]`
//! table, where each may give the repository as `OWNER/NAME`.

use super::forge::{ForgeConfig, ForgeEnv};
use super::overrides::Overrides;
use crate::error::{Error, Result};

fn required(name: &str, flag: &str, var: &str, value: Option<String>) -> Result<String> {
    let value = value.filter(|v| !v.trim().is_empty()).ok_or_else(|| {
        let whole = if name == "owner" {
            " (or give the repo as OWNER/NAME: --repo acme/app)"
        } else {
            ""
        };
        Error::config(format!(
            "a forge url is set but {name} is not; pass {flag}, set ${var}, or set [forge] \
             {name}{whole}"
        ))
    })?;
    if value.contains('/') || value.contains(char::is_whitespace) {
        return Err(Error::config(format!(
            "forge {name} {value:?} must be a single name, without '/' or spaces"
        )));
    }
    Ok(value)
}

/// Which of the forge's coordinates some layer (the overrides, the environment or the `[forge]`
/// table) gives, for a program that fills the gaps from elsewhere (the CLI, from the git remote).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForgeGiven {
    /// The forge URL in force, if any.
    pub url: Option<String>,
    /// Whether an owner is given (a repository given as `OWNER/NAME` gives one).
    pub owner: bool,
    /// Whether a repository name is given.
    pub repo: bool,
    /// Whether a token is given (`token_file` or `$FORGESTATE_TOKEN`).
    pub token: bool,
}

/// What [`ForgeGiven`] says of these layers; `url` is the URL in force.
pub(super) fn given(
    file: &ForgeConfig,
    env: &ForgeEnv,
    over: &Overrides,
    url: Option<String>,
) -> ForgeGiven {
    let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.trim().is_empty());
    let whole = |v: &Option<String>| v.as_deref().is_some_and(|v| v.contains('/'));
    let repos = [&over.repo, &env.repo, &file.repo];
    ForgeGiven {
        url,
        owner: [&over.owner, &env.owner, &file.owner].into_iter().any(set)
            || repos.into_iter().any(whole),
        repo: repos.into_iter().any(set),
        token: over.token_file.is_some() || env.token.is_some() || file.token_file.is_some(),
    }
}

/// The owner and repository name in force. Each place that sets them (the flags, the environment,
/// the `[forge]` table, in that order) may give the repository as `OWNER/NAME`, as `--repo` and
/// gh's `GH_REPO` take it: that sets the owner at the same place, so `FORGESTATE_REPO=acme/app`
/// alone is enough, and an owner given at a place before it still wins.
pub(super) fn coordinates(
    file: &ForgeConfig,
    env: &ForgeEnv,
    over: &Overrides,
) -> Result<(String, String)> {
    let places = [
        ("--owner", "--repo", over.owner.clone(), over.repo.clone()),
        (
            "$FORGESTATE_OWNER",
            "$FORGESTATE_REPO",
            env.owner.clone(),
            env.repo.clone(),
        ),
        (
            "[forge] owner",
            "[forge] repo",
            file.owner.clone(),
            file.repo.clone(),
        ),
    ];
    let mut owner = None;
    let mut repo = None;
    for (owner_key, repo_key, given_owner, given_repo) in places {
        let given_owner = given_owner.filter(|v| !v.trim().is_empty());
        let mut given_repo = given_repo.filter(|v| !v.trim().is_empty());
        let mut place_owner = given_owner.clone();
        if let Some(text) = given_repo.clone()
            && let Some((o, n)) = text.split_once('/')
        {
            if o.trim().is_empty()
                || n.trim().is_empty()
                || n.contains('/')
                || text.contains(char::is_whitespace)
            {
                return Err(Error::config(format!(
                    "{repo_key} {text:?} must be NAME or OWNER/NAME, e.g. acme/app"
                )));
            }
            if let Some(given) = given_owner.as_deref().filter(|g| *g != o) {
                return Err(Error::config(format!(
                    "{repo_key} {text:?} names owner {o:?} but {owner_key} says {given:?}; \
                     give one of them"
                )));
            }
            place_owner = Some(o.to_string());
            given_repo = Some(n.to_string());
        }
        owner = owner.or(place_owner);
        repo = repo.or(given_repo);
    }
    let owner = required("owner", "--owner", "FORGESTATE_OWNER", owner)?;
    let repo = required("repo", "--repo", "FORGESTATE_REPO", repo)?;
    Ok((owner, repo))
}
