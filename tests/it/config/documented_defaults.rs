//! The documented example configuration (`config/forgestate.toml`, the built-in defaults) holds
//! the real defaults of `forgestate::defaults`.

use forgestate::defaults;

/// The `# key = value` lines of the documented `[forge]` table in `config/forgestate.toml`.
fn documented() -> std::collections::BTreeMap<String, String> {
    let text = forgestate::config::DEFAULTS;
    section(text.split("# [forge]").nth(1).unwrap_or_default())
}

/// The `# key = value` lines of the `[status]` table, before its per-agent example.
fn documented_status() -> std::collections::BTreeMap<String, String> {
    let text = forgestate::config::DEFAULTS;
    let status = text.split("\n[status]\n").nth(1).unwrap_or_default();
    section(status.split("# [status.agents").next().unwrap_or_default())
}

fn section(text: &str) -> std::collections::BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# "))
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| {
            let v = v.split(" #").next().unwrap_or_default().trim();
            (k.trim().to_string(), v.trim_matches('"').to_string())
        })
        .collect()
}

#[test]
fn the_cache_table_holds_the_real_defaults() {
    let file = forgestate::config::ConfigFile::parse(forgestate::config::DEFAULTS, "defaults")
        .expect("the built-in defaults parse");
    assert_eq!(file.cache.enabled, Some(defaults::CACHE_ENABLED));
    assert_eq!(file.cache.resync_secs, Some(defaults::CACHE_RESYNC_SECS));
}

#[test]
fn the_format_and_local_tables_hold_the_real_defaults() {
    let file = forgestate::config::ConfigFile::parse(forgestate::config::DEFAULTS, "defaults")
        .expect("the built-in defaults parse");
    assert_eq!(file.format.max_body_bytes, Some(defaults::MAX_BODY_BYTES));
    let keys: Vec<String> = defaults::REDACT_KEYS
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(file.redact_keys, Some(keys));
    assert_eq!(
        file.local.dir, None,
        "the default local dir is LOCAL_DIR, not a file value"
    );
}

#[test]
fn the_documented_defaults_are_the_real_ones() {
    use forgestate::defaults::*;
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
        ("wait", format!("{WAIT_SECS}s")),
        ("patience", format!("{PATIENCE_SECS}s")),
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
    let status = documented_status();
    let finals: Vec<String> = FINAL_RESUME_POINTS
        .iter()
        .map(|p| format!("{p:?}"))
        .collect();
    let expect = [
        ("warn_after_secs", STATUS_WARN_AFTER_SECS.to_string()),
        ("stalled_after_secs", STATUS_STALLED_AFTER_SECS.to_string()),
        ("final_resume_points", format!("[{}]", finals.join(", "))),
    ];
    for (key, value) in expect {
        assert_eq!(
            status.get(key),
            Some(&value),
            "config/forgestate.toml documents [status] {key} wrongly"
        );
    }
}
