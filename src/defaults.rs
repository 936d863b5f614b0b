//! Every built-in default, in one place. `config/forgestate.toml` documents them, and a test
//! checks that file against these values, so the two cannot drift apart.

/// The session issue's exact title.
pub const TITLE: &str = "[Automated] CleverAgents Build Session";
/// The label the session issue carries.
pub const LABEL: &str = "Type/Automation";
/// The colour of a label forgestate creates.
pub const LABEL_COLOR: &str = "1d76db";
/// The description of a label forgestate creates.
pub const LABEL_DESCRIPTION: &str = "Issues created and maintained by automation";
/// Whether writes create the session issue when there is none.
pub const AUTO_INIT: bool = true;
/// Seconds to wait for a TCP/TLS connection.
pub const CONNECT_TIMEOUT_SECS: u64 = 5;
/// Seconds to wait for one whole request.
pub const REQUEST_TIMEOUT_SECS: u64 = 30;
/// How long a cached session issue number is trusted before a write re-checks it.
pub const RECHECK_SECS: u64 = 300;
/// Total seconds for the retries of one request.
pub const RETRY_BUDGET_SECS: u64 = 30;
/// The per-attempt timeout of a quick probe (the server version under `-v`).
pub const QUICK_TIMEOUT_MS: u64 = 800;
/// Answers larger than this many MiB are refused.
pub const MAX_RESPONSE_MIB: usize = 256;
/// Seconds of each command that may go to draining the outbox.
pub const DRAIN_BUDGET_SECS: u64 = 10;
/// The longest pause between drains after the forge failed.
pub const DRAIN_MAX_BACKOFF_SECS: u64 = 300;
/// Rotate the session issue once it holds more comments than this (0: never).
pub const ROTATE_AFTER: u64 = 2_000;
/// A rotation carries forward the sessions active within this many days.
pub const CARRY_DAYS: u64 = 30;
/// Whether plain `http://` is allowed off loopback.
pub const ALLOW_INSECURE_HTTP: bool = false;

#[cfg(test)]
mod tests {
    /// The `# key = value` lines of the documented `[forge]` table in `config/forgestate.toml`.
    fn documented() -> std::collections::BTreeMap<String, String> {
        let text = crate::config::DEFAULTS;
        let forge = text.split("# [forge]").nth(1).unwrap_or_default();
        forge
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .filter_map(|l| l.split_once(" = "))
            .map(|(k, v)| {
                let v = v.split(" #").next().unwrap_or_default().trim();
                (k.trim().to_string(), v.trim_matches('"').to_string())
            })
            .collect()
    }

    #[test]
    fn the_documented_defaults_are_the_real_ones() {
        use super::*;
        let doc = documented();
        let expect = [
            ("title", TITLE.to_string()),
            ("label", LABEL.to_string()),
            ("label_color", LABEL_COLOR.to_string()),
            ("label_description", LABEL_DESCRIPTION.to_string()),
            ("auto_init", AUTO_INIT.to_string()),
            ("connect_timeout_secs", CONNECT_TIMEOUT_SECS.to_string()),
            ("request_timeout_secs", REQUEST_TIMEOUT_SECS.to_string()),
            ("recheck_secs", RECHECK_SECS.to_string()),
            ("retry_budget_secs", RETRY_BUDGET_SECS.to_string()),
            ("quick_timeout_ms", QUICK_TIMEOUT_MS.to_string()),
            ("max_response_mib", MAX_RESPONSE_MIB.to_string()),
            ("drain_budget_secs", DRAIN_BUDGET_SECS.to_string()),
            ("drain_max_backoff_secs", DRAIN_MAX_BACKOFF_SECS.to_string()),
            ("allow_insecure_http", ALLOW_INSECURE_HTTP.to_string()),
            ("rotate_after", ROTATE_AFTER.to_string()),
            ("carry_days", CARRY_DAYS.to_string()),
        ];
        for (key, value) in expect {
            assert_eq!(
                doc.get(key),
                Some(&value),
                "config/forgestate.toml documents {key} wrongly"
            );
        }
    }
}
