//! Forge coordinates from the command line and from git: `--repo owner/name`, and, when no owner
//! or repo is configured, the git remote `origin` of the working directory (as `tea` and `gh` do).
//!
//! Inferred values only fill gaps: flags beat the environment, which beats the config file, which
//! beats the git remote. They are handed to the library as [`Overrides`], so nothing else changes.

use std::path::Path;
use std::process::{Command, Stdio};

use forgestate::config::{Config, Overrides};

/// The forge a git remote points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The forge's web address: the remote's own for http(s), `https://host` for ssh.
    pub url: String,
    pub owner: String,
    pub repo: String,
    /// The remote is ssh (or scp-style), so `url` is a guess at the web address.
    pub ssh: bool,
}

/// Splits `--repo owner/name` into `--owner` and `--repo`. An `--owner` that names someone else
/// is a usage error.
pub fn split_repo(over: &mut Overrides) -> Result<(), String> {
    let Some(text) = over.repo.clone() else {
        return Ok(());
    };
    let Some((owner, name)) = text.split_once('/') else {
        return Ok(());
    };
    if owner.is_empty() || name.is_empty() || name.contains('/') {
        return Err(format!(
            "--repo {text:?} must be NAME or OWNER/NAME, e.g. --repo acme/app"
        ));
    }
    if let Some(given) = over.owner.as_deref().filter(|o| *o != owner) {
        return Err(format!(
            "--repo {text:?} names owner {owner:?} but --owner says {given:?}; give one of them"
        ));
    }
    over.owner = Some(owner.to_string());
    over.repo = Some(name.to_string());
    Ok(())
}

/// Parses a git remote URL: `https://host/owner/repo.git`, `ssh://git@host:2222/owner/repo.git`,
/// or scp-style `git@host:owner/repo.git`. Anything else (a local path, `git://`) is `None`.
pub fn parse_remote(text: &str) -> Option<Remote> {
    let text = text.trim();
    let (web, path, ssh) = match text.split_once("://") {
        Some((scheme, rest)) => {
            let scheme = scheme.to_ascii_lowercase();
            let (authority, path) = rest.split_once('/')?;
            let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            match scheme.as_str() {
                "https" | "http" => (format!("{scheme}://{host_port}"), path, false),
                "ssh" | "git+ssh" | "ssh+git" => {
                    (format!("https://{}", strip_port(host_port)), path, true)
                }
                _ => return None,
            }
        }
        None => {
            // scp-style: a colon before any slash, as git itself decides.
            let (authority, path) = text.split_once(':')?;
            if authority.contains('/') || authority.is_empty() {
                return None;
            }
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            (format!("https://{host}"), path, true)
        }
    };
    let mut segments: Vec<&str> = path
        .trim_end_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let repo = segments.pop()?;
    let repo = repo.strip_suffix(".git").unwrap_or(repo);
    let owner = segments.pop()?;
    let host = host_of(&web)?;
    let valid = |s: &str| !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == '@');
    if !valid(owner) || !valid(repo) || !valid(host) {
        return None;
    }
    // A forge served under a sub-path (https://host/gitea/owner/repo) keeps it.
    let url = if ssh || segments.is_empty() {
        web
    } else {
        format!("{web}/{}", segments.join("/"))
    };
    Some(Remote {
        url,
        owner: owner.to_string(),
        repo: repo.to_string(),
        ssh,
    })
}

fn strip_port(host_port: &str) -> &str {
    if let Some(end) = host_port.strip_prefix('[').and_then(|h| h.find(']')) {
        return &host_port[..end + 2];
    }
    host_port.split(':').next().unwrap_or(host_port)
}

/// The host of a URL, lower-cased comparisons are the caller's: `https://u@Host:3000/x` → `Host`.
fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    Some(strip_port(host_port)).filter(|h| !h.is_empty())
}

/// `git remote get-url origin` in `dir` (rewrites such as `insteadOf` applied); `None` when git
/// is missing, `dir` is not in a repository, or there is no `origin`.
pub fn origin_url(dir: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["remote", "get-url", "origin"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Fills owner, repo and the forge URL from the git remote `origin` of `dir`, where nothing else
/// sets them. Says what it did under `-v`.
///
/// With no forge URL configured, the remote is consulted only when a token is (`--token-file`,
/// `$FORGESTATE_TOKEN` or `[forge] token_file`): without one, the local store is meant, and a
/// checkout with an `origin` must not turn into a forge that then fails for want of a token.
pub fn infer(config: &Config, dir: &Path) -> Overrides {
    let mut over = config.overrides().clone();
    if over.store.is_some() {
        return over;
    }
    // The configuration's layers say what is given (a repo given as OWNER/NAME, such as
    // `FORGESTATE_REPO=acme/app`, names the owner too).
    let given = config.forge_given();
    let (url, has_owner, has_repo, has_token) = (given.url, given.owner, given.repo, given.token);
    let forge_meant = url.is_some() || has_token;
    let complete = url.is_some() && has_owner && has_repo;
    if !forge_meant || complete {
        return over;
    }
    let Some(text) = origin_url(dir) else {
        tracing::info!(
            "no git remote origin in {}: nothing to infer",
            dir.display()
        );
        return over;
    };
    let Some(remote) = parse_remote(&text) else {
        tracing::info!("git remote origin {text:?} is not an http(s) or ssh forge address");
        return over;
    };
    match &url {
        Some(url) => {
            let same = host_of(url)
                .zip(host_of(&remote.url))
                .is_some_and(|(a, b)| a.eq_ignore_ascii_case(b));
            if !same {
                tracing::info!(
                    "git remote origin {text:?} is on another host than the forge {url}: not \
                     inferring owner or repo from it"
                );
                return over;
            }
        }
        None => {
            let how = if remote.ssh {
                " (an ssh remote: assuming the forge's web address is https on the same host; \
                 pass --url if it is not)"
            } else {
                ""
            };
            tracing::info!(
                "forge url {} inferred from git remote origin {text:?}{how}",
                remote.url
            );
            over.url = Some(remote.url.clone());
        }
    }
    if !has_owner {
        tracing::info!(
            "forge owner {:?} inferred from git remote origin",
            remote.owner
        );
        over.owner = Some(remote.owner.clone());
    }
    if !has_repo {
        tracing::info!(
            "forge repo {:?} inferred from git remote origin",
            remote.repo
        );
        over.repo = Some(remote.repo);
    }
    over
}
