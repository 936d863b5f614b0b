//! The forge's checks, from a [`Probe`]: server, token, repository and write access, label,
//! session issue, clock and the issue-number cache.

use chrono::Utc;

use super::Check;
use crate::defaults::CLOCK_SKEW_WARN_SECS;
use crate::forge::{ForgeError, Probe};

/// The forge checks; returns the token's login when it is known.
pub(super) fn forge_checks(p: &Probe, checks: &mut Vec<Check>) -> Option<String> {
    let unreachable = p.version.as_ref().is_err_and(|e| e.status().is_none());
    checks.push(match &p.version {
        Ok(v) => Check::ok("forge", format!("{} at {}", v.describe(), p.base)),
        Err(ForgeError::Unauthorized { .. }) => Check::ok(
            "forge",
            format!(
                "{} answers (it refused the token before telling its version)",
                p.base
            ),
        ),
        Err(e) if unreachable => Check::fail("forge", e.to_string()).fix(
            "check the url (--url, FORGESTATE_URL or [forge] url), the network, and that the \
             forge is up; records are kept in the outbox meanwhile",
        ),
        Err(e) => Check::warn("forge", format!("answers, but: {e}")),
    });
    let skip = |name, why: &str| Check::skip(name, format!("not checked: {why}"));
    let Some(user) = &p.user else {
        for name in [
            "token",
            "repository",
            "write access",
            "label",
            "session issue",
        ] {
            checks.push(skip(name, "the forge does not answer"));
        }
        return None;
    };
    let login = user.as_ref().ok().map(|u| u.login.clone());
    checks.push(match user {
        Ok(u) => Check::ok("token", format!("valid; records are posted as {}", u.login)),
        Err(ForgeError::Unauthorized { .. }) => Check::fail(
            "token",
            "the forge rejected the token (401): unknown, revoked or mistyped",
        )
        .fix(
            "set FORGESTATE_TOKEN (or --token-file, [forge] token_file) to a valid personal \
             access token with the write:issue and read:user scopes",
        ),
        Err(ForgeError::Forbidden { .. }) => Check::fail(
            "token",
            "the token is valid but may not read its own user (403): it lacks the read:user scope",
        )
        .fix("create a token with the write:issue and read:user scopes"),
        Err(e) => Check::fail("token", e.to_string()),
    });
    let Some(repository) = &p.repository else {
        for name in ["repository", "write access", "label", "session issue"] {
            checks.push(skip(name, "the token is refused"));
        }
        return login;
    };
    match repository {
        Ok(r) => {
            checks.push(Check::ok("repository", format!("{} found", r.full_name)));
            checks.push(match (r.archived, r.write) {
                (true, _) => Check::fail(
                    "write access",
                    format!("{} is archived: the forge refuses every write", r.full_name),
                )
                .fix("unarchive it, or point forgestate at another repository"),
                (false, Some(true)) => Check::ok(
                    "write access",
                    format!("{} may write to {}", who(&login), r.full_name),
                ),
                (false, Some(false)) => Check::warn(
                    "write access",
                    format!(
                        "{} has no write access to {}: comments still post, but a new session \
                         issue would lose its label",
                        who(&login),
                        r.full_name
                    ),
                )
                .fix("give the user write access to the repository's issues"),
                (false, None) => Check::warn(
                    "write access",
                    "unknown: the token lacks the read:repository scope, which shows the user's \
                     permissions (doctor never writes to find out)",
                )
                .fix("add the read:repository scope to the token to have this checked"),
            });
        }
        Err(e) => {
            let detail = match e {
                ForgeError::NotFound { .. } => format!(
                    "{} not found (404): it does not exist, or the token's user cannot see it",
                    p.repo
                ),
                e => e.to_string(),
            };
            checks.push(Check::fail("repository", detail).fix(
                "check the owner and repo (--repo OWNER/NAME, FORGESTATE_OWNER/FORGESTATE_REPO, or \
                 [forge] owner/repo) and that the token's user can read it",
            ));
            for name in ["write access", "label", "session issue"] {
                checks.push(skip(name, "the repository is not found"));
            }
            return login;
        }
    }
    checks.push(match &p.labels {
        Some(Ok(1)) => Check::ok("label", format!("{:?} present", p.label)),
        Some(Ok(0)) => Check::fail("label", format!("no label {:?} in {}", p.label, p.repo))
            .fix("run `forgestate init` (it creates the label), or set [forge] label"),
        Some(Ok(n)) => Check::warn("label", format!("{n} labels are named {:?}", p.label))
            .fix("delete the copies that are not on the session issue"),
        Some(Err(e)) => Check::fail("label", e.to_string()),
        None => skip("label", "the repository is not found"),
    });
    checks.push(match &p.issue {
        Some(Ok(Some(issue))) => Check::ok(
            "session issue",
            format!(
                "{} {} ({} comments)",
                issue.number, issue.html_url, issue.comments
            ),
        ),
        Some(Ok(None)) => Check::fail(
            "session issue",
            format!(
                "no open issue titled {:?} with label {:?} in {}",
                p.title, p.label, p.repo
            ),
        )
        .fix("run `forgestate init` to create it"),
        Some(Err(e)) => Check::fail("session issue", e.to_string()),
        None => skip("session issue", "the repository is not found"),
    });
    checks.extend(thread_check(p));
    checks.push(clock_check(p));
    login
}

/// The session thread: its head and members (the chain, `forge/chain.rs`). A second open
/// member (a duplicate, a reopened old issue) is a warning: the next record tidies it.
fn thread_check(p: &Probe) -> Option<Check> {
    let Some(Ok(Some(head))) = &p.issue else {
        return None;
    };
    let members = match &p.members {
        Some(Ok(m)) => m,
        Some(Err(e)) => {
            return Some(Check::warn("session thread", e.to_string()));
        }
        None => return None,
    };
    let named: Vec<String> = members
        .iter()
        .map(|(n, open)| format!("#{n} ({})", if *open { "open" } else { "closed" }))
        .collect();
    let detail = format!(
        "head {}; members {}",
        head.number,
        if named.is_empty() {
            "none".to_string()
        } else {
            named.join(", ")
        }
    );
    let stray = members.iter().any(|(n, open)| *open && *n != head.number.0);
    let edited = head.title != p.title || !head.has_label(&p.label);
    if !p.look_alikes.is_empty() || edited {
        let mut said = vec![detail];
        if edited {
            said.push(format!(
                "the head {} no longer has the session title {:?} and label {:?} (someone \
                 edited it); it is still the thread",
                head.number, p.title, p.label
            ));
        }
        if !p.look_alikes.is_empty() {
            let named: Vec<String> = p.look_alikes.iter().map(|n| format!("#{n}")).collect();
            said.push(format!(
                "look-alike issues {}: the session title and label, but no trusted author \
                 opened them; ignored",
                named.join(", ")
            ));
        }
        return Some(Check::warn("session thread", said.join("; ")).fix(
            "restore the head's title and label; close the look-alikes, or add their \
                 author to trusted_authors if they should count",
        ));
    }
    Some(if stray {
        Check::warn("session thread", detail).fix(
            "nothing to do by hand: the next record carries the other open member's records to \
             the head and closes it",
        )
    } else {
        Check::ok("session thread", detail)
    })
}

fn who(login: &Option<String>) -> String {
    login
        .clone()
        .unwrap_or_else(|| "the token's user".to_string())
}

fn clock_check(p: &Probe) -> Check {
    let Some(lag) = p.clock_lag else {
        return Check::skip("clock", "the forge sent no Date header");
    };
    // The forge's own times (the session issue's last change) running ahead of its Date header
    // mean the header is what is off (a proxy with another clock), not this machine.
    let stamped = match &p.issue {
        Some(Ok(Some(issue))) => Some(issue.updated_at),
        _ => None,
    };
    let local = Utc::now();
    let date_now = local - lag;
    let clock = crate::report::clock::consistent(date_now, local, stamped);
    if let Some(ahead) = clock.ahead {
        return Check::warn(
            "clock",
            format!(
                "the forge's Date header runs {} behind the times it stamps on its own issues \
                 and comments; this machine's clock is not what is off",
                crate::report::clock::span(ahead)
            ),
        )
        .fix(
            "fix the clock of the forge or of the proxy in front of it (the one that sends \
             Date); until then forgestate measures ages from the forge's newest comment time",
        );
    }
    if let Some(ahead) = clock.date_ahead {
        return Check::warn(
            "clock",
            format!(
                "the forge's Date header runs {} ahead of this machine's clock, and no time it \
                 stamped on the session issue bears that out",
                crate::report::clock::span(ahead)
            ),
        )
        .fix(
            "sync this machine's clock (NTP) if it is the one behind; otherwise fix the clock \
             of the proxy in front of the forge (the one that sends Date). Until a comment \
             shows which, forgestate measures ages on this machine's clock",
        );
    }
    let secs = lag.num_seconds();
    let how = match secs {
        s if s > 0 => format!("this machine is {s}s ahead of the forge"),
        s if s < 0 => format!("this machine is {}s behind the forge", -s),
        _ => "this machine and the forge agree".to_string(),
    };
    if secs.abs() > CLOCK_SKEW_WARN_SECS {
        Check::warn("clock", how).fix(
            "sync this machine's clock (NTP); forgestate measures ages on the forge's clock, \
             but Time: lines in records use this one",
        )
    } else {
        Check::ok("clock", how)
    }
}

pub(super) fn cache_check(p: &Probe) -> Check {
    let Some(dir) = &p.cache_dir else {
        return Check::ok("cache", "disabled: every run looks the issue up");
    };
    if let Some(problem) = crate::forge::cache::dir_problem(dir) {
        return Check::warn("cache", format!("{}: not used: {problem}", dir.display()),
        )
        .fix(format!(
            "run `chmod 700 {}` if it is yours, or set [forge] cache_dir to a directory of your \
             own; until then every run looks the session issue up and reads the whole thread",
            dir.display()
        ));
    }
    let found = match &p.issue {
        Some(Ok(Some(issue))) => Some(issue.number.0),
        _ => None,
    };
    match (p.cache.issue, p.cache.current) {
        (None, _) => Check::ok(
            "cache",
            format!(
                "{}: no session issue cached yet (the next command caches it)",
                dir.display()
            ),
        ),
        (Some(n), false) => Check::ok(
            "cache",
            format!(
                "{}: #{n} was cached under another title or label; it is looked up again",
                dir.display()
            ),
        ),
        (Some(n), true) if found.is_some_and(|f| f != n) => Check::warn(
            "cache",
            format!(
                "{}: #{n} cached, but the session issue is #{}",
                dir.display(),
                found.unwrap_or_default()
            ),
        )
        .fix(format!(
            "nothing to do: this check forgot #{n}, so the next command looks the session \
             issue up again and uses #{}",
            found.unwrap_or_default()
        )),
        (Some(n), true) => {
            let age = p
                .cache
                .checked_at
                .map(|t| format!(", checked {}s ago", (Utc::now() - t).num_seconds().max(0)))
                .unwrap_or_default();
            Check::ok("cache", format!("{}: #{n} cached{age}", dir.display()))
        }
    }
}
