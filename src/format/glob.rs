//! The one rule for matching a name against a key written as a glob, shared by resume maps
//! (`subtask_*_complete`) and record filters (`implementation-*`). Pure.

use glob::Pattern;

/// Whether `name` matches a key written as a glob (`implementation-*`): the key itself, or the
/// glob. A key that is not a valid glob matches only itself. Resume maps and record filters
/// match names this one way.
pub fn glob_matches(key: &str, name: &str) -> bool {
    match Pattern::new(key) {
        Ok(pattern) => key_matches(key, &pattern, name),
        Err(_) => key == name,
    }
}

/// The one matching rule: the key literally, or its compiled glob.
pub fn key_matches(key: &str, pattern: &Pattern, name: &str) -> bool {
    key == name || pattern.matches(name)
}
