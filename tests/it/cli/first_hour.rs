//! The first hour with the CLI (issue #19): no silent fresh start (`resume` with glob
//! characters is a usage error, a mistyped name gets a "did you mean"), quiet success on stderr,
//! help that reads well, gh-style tables and `--json=FIELDS` / `--jq`.

use crate::common;
use std::path::Path;

use common::cli::{Bin, stderr, stdout};
use serde_json::Value;

/// The binary with its per-user directories under `home` (the default local store lives there).
fn bin(home: &Path) -> Bin {
    Bin::new(home).env("XDG_STATE_HOME", home.join("state").display().to_string())
}

fn ok(bin: &Bin, line: &str) -> (String, String) {
    let out = bin.line(line);
    assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
    (stdout(&out), stderr(&out))
}

/// Two checkpoints of `implementation-worker` in `demo-1`, one of `reviewer` in `demo`.
fn seeded(home: &Path) -> Bin {
    let b = bin(home);
    ok(
        &b,
        "checkpoint --agent implementation-worker --session demo-1 --phase clone_complete --set n=1",
    );
    ok(
        &b,
        "checkpoint --agent implementation-worker --session demo-1 --phase subtask_1_complete",
    );
    ok(
        &b,
        "checkpoint --agent reviewer --session demo --phase review_posted",
    );
    b
}

#[test]
fn resume_with_glob_characters_is_a_usage_error_pointing_to_list_and_latest() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path());
    for line in [
        "resume --agent implementation-* --session demo-1",
        "resume --agent implementation-worker --session demo-?",
        "resume --agent implementation-worker --session [demo]",
    ] {
        let out = b.line(line);
        assert_eq!(out.status.code(), Some(64), "{line}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("has glob characters"), "{err}");
        assert!(err.contains("use list or latest"), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert_eq!(stdout(&out), "", "no fresh start printed");
        let json = b.line(&format!("{line} --json"));
        assert_eq!(json.status.code(), Some(64));
        let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(doc["error"]["code"], 64, "{doc}");
    }
}

#[test]
fn a_mistyped_name_gets_one_did_you_mean_line() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path());
    // A mistyped session: the agent's sessions are offered.
    let (out, err) = ok(&b, "resume --agent implementation-worker --session demo-l");
    assert!(out.contains("fresh start"), "{out}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("forgestate: warning: no checkpoint of agent")
            && lines[0].ends_with("did you mean session \"demo-1\"?"),
        "{err}"
    );
    // A mistyped agent: the session's agents are offered.
    let (_, err) = ok(&b, "resume --agent reviwer --session demo");
    assert!(err.contains("did you mean agent \"reviewer\"?"), "{err}");
    // In --json, the same line is a warning of the answer.
    let (out, _) = ok(
        &b,
        "resume --agent implementation-worker --session demo-l --json",
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["fresh_start"], true);
    let warnings = doc["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{doc}");
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .contains("did you mean session \"demo-1\"")
    );
    // Nothing close to offer: a plain fresh start, silent.
    let (out, err) = ok(&b, "resume --agent newcomer --session brand-new");
    assert!(out.contains("fresh start"), "{out}");
    assert_eq!(err, "", "nothing to suggest");
    // The right names resume, with no warning.
    let (out, err) = ok(&b, "resume --agent implementation-worker --session demo-1");
    assert!(out.contains("phase:        subtask_1_complete"), "{out}");
    assert_eq!(err, "");
}

#[test]
fn routine_commands_are_quiet_on_stderr_and_the_store_line_comes_once() {
    let dir = tempfile::tempdir().unwrap();
    let b = bin(dir.path());
    let (_, first) = ok(
        &b,
        "checkpoint --agent w --session s --phase clone_complete",
    );
    assert!(
        first.contains("no forge configured; using the local store in"),
        "the first use names the store: {first}"
    );
    assert_eq!(first.lines().count(), 1, "{first}");
    for line in [
        "checkpoint --agent w --session s --phase subtask_1_complete",
        "health --agent w --session s",
        "resume --agent w --session s",
        "latest --agent w",
        "list",
        "status",
        "history --session s",
        "list --json",
    ] {
        let (out, err) = ok(&b, line);
        assert!(!out.is_empty(), "{line} prints its result on stdout");
        assert_eq!(err, "", "{line}: nothing on stderr");
    }
    let (_, err) = ok(&b, "list -v");
    assert!(
        err.contains("using the local store in"),
        "-v shows it again: {err}"
    );
    let (_, err) = ok(&b, "list -q");
    assert_eq!(err, "");
}

/// `shown` (microseconds, as the tables print times) is the store's `stored` time.
fn same_time(shown: &str, stored: &Value) -> bool {
    let stored = stored.as_str().unwrap_or_default();
    shown.ends_with('Z') && stored.starts_with(shown.trim_end_matches('Z'))
}

#[test]
fn piped_tables_are_tab_separated_and_show_the_stores_time() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path());
    let (json, _) = ok(&b, "list --json");
    let json: Value = serde_json::from_str(&json).unwrap();
    let (text, _) = ok(&b, "list");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "no header when piped: {text}");
    for (line, record) in lines.iter().zip(json["records"].as_array().unwrap()) {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), 6, "{line:?}");
        assert!(
            cells.iter().all(|c| c.trim() == *c && !c.is_empty()),
            "unpadded: {line:?}"
        );
        assert!(
            same_time(cells[1], &record["comment"]["created_at"]),
            "the store's time: {line:?}"
        );
        assert_eq!(cells[3], record["agent"]);
    }
    let (text, _) = ok(&b, "status");
    for line in text.lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), 8, "{line:?}");
        assert!(["alive", "warning", "stalled", "paused", "completed"].contains(&cells[0]));
    }
    let (text, _) = ok(&b, "history --session demo-1");
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{text}");
    for (row, record) in rows.iter().zip(json["records"].as_array().unwrap()) {
        let cells: Vec<&str> = row.split('\t').collect();
        assert_eq!(cells.len(), 8, "{row:?}");
        assert!(
            same_time(cells[2], &record["comment"]["created_at"]),
            "the store's time: {row:?}"
        );
    }
}

fn help_of(line: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = ok(&bin(dir.path()), line);
    out
}

#[test]
fn help_fits_in_100_columns_and_groups_the_verbs_by_who_uses_them() {
    let mut lines = vec!["--help".to_string(), "-h".to_string()];
    for verb in common::cli::verbs() {
        lines.push(format!("{verb} --help"));
        lines.push(format!("{verb} -h"));
    }
    for line in &lines {
        for l in help_of(line).lines() {
            assert!(
                l.chars().count() <= 100,
                "`{line}`: {} columns: {l}",
                l.chars().count()
            );
        }
    }
    let top = help_of("--help");
    // A verb's one line that wraps goes on under its description, not under the verb.
    let lines: Vec<&str> = top.lines().collect();
    let status = lines
        .iter()
        .position(|l| l.starts_with("  status "))
        .unwrap();
    let column = lines[status].find("Who is alive").unwrap();
    let next = lines[status + 1];
    assert_eq!(next.len() - next.trim_start().len(), column, "{top}");
    let mut at = 0;
    // The table's verbs in the table's order under their group's heading; the CLI's own
    // commands among the integrations'.
    for group in forgestate::verbs::Group::ALL {
        let verbs: Vec<&str> = forgestate::verbs::table()
            .into_iter()
            .filter(|s| s.group == group)
            .map(|s| s.name)
            .collect();
        let group = format!("{}:", group.heading());
        let start = top[at..].find(&format!("\n{group}\n")).map(|i| i + at);
        let start = start.unwrap_or_else(|| panic!("{group} after the previous group:\n{top}"));
        let section: &str = top[start + 1..].split("\n\n").next().unwrap();
        let listed: Vec<&str> = section
            .lines()
            .skip(1)
            .filter(|l| !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let mut own: Vec<&str> = listed
            .iter()
            .copied()
            .filter(|v| common::cli::CLI_OWN.contains(v))
            .collect();
        if group == "Integrations:" {
            own.sort_unstable();
            let mut all = common::cli::CLI_OWN.to_vec();
            all.sort_unstable();
            assert_eq!(own, all, "{group}\n{section}");
        }
        let mut listed = listed;
        listed.retain(|v| !common::cli::CLI_OWN.contains(v));
        assert_eq!(listed, verbs, "{group}\n{section}");
        at = start + 1;
    }
    let footer = top
        .split("Exit codes:")
        .nth(1)
        .expect("an exit-code footer");
    for code in [
        "0 ok",
        "1 a check failed",
        "64 usage",
        "65 bad input",
        "73 not posted",
        "74 IO",
        "75 try",
        "78 conf",
    ] {
        assert!(
            footer.replace('\n', " ").contains(code),
            "footer names {code}: {footer}"
        );
    }
}

#[test]
fn a_verbs_help_lists_its_own_flags_and_points_to_the_globals() {
    let checkpoint = help_of("checkpoint --help");
    assert!(
        checkpoint.contains("--agent") && checkpoint.contains("--phase"),
        "{checkpoint}"
    );
    for global in [
        "--token-file",
        "--allow-insecure-http",
        "--color",
        "--refresh",
        "--config",
    ] {
        assert!(
            !checkpoint.contains(global),
            "checkpoint --help lists {global}:\n{checkpoint}"
        );
    }
    let line = checkpoint
        .lines()
        .find(|l| l.contains("forgestate help globals"))
        .unwrap_or_else(|| panic!("one line points to the globals:\n{checkpoint}"));
    assert!(
        line.contains("--json") && line.contains("--strict"),
        "{line}"
    );
    assert!(
        checkpoint.lines().count() <= 70,
        "{} lines: the globals are not repeated",
        checkpoint.lines().count()
    );
    // The line names only globals that mean something to the verb.
    let latest = help_of("latest --help");
    let line = latest.lines().find(|l| l.contains("help globals")).unwrap();
    assert!(
        !line.contains("--strict") && line.contains("--store"),
        "{line}"
    );
    let parse = help_of("parse --help");
    let line = parse.lines().find(|l| l.contains("help globals")).unwrap();
    assert!(
        !line.contains("--store") && !line.contains("--repo"),
        "{line}"
    );

    // `forgestate help globals` lists every one of them, described.
    let globals = help_of("help globals");
    for flag in [
        "--config",
        "--store",
        "--url",
        "--owner",
        "--repo",
        "--token-file",
        "--allow-insecure-http",
        "--strict",
        "--json",
        "--jq",
        "--color",
        "--verbose",
        "--quiet",
        "--refresh",
    ] {
        assert!(
            globals.contains(flag),
            "help globals lists {flag}:\n{globals}"
        );
    }
    assert!(
        globals.lines().all(|l| l.chars().count() <= 100),
        "{globals}"
    );

    // Hidden from the help is still accepted (and ignored where it means nothing), so scripts
    // that pass a flag everywhere keep working.
    let dir = tempfile::tempdir().unwrap();
    ok(
        &bin(dir.path()),
        "checkpoint --agent w --session s --phase p --refresh",
    );
    ok(&bin(dir.path()), "latest --json --color never");
}

#[test]
fn a_mistyped_verb_suggests_what_was_meant() {
    let dir = tempfile::tempdir().unwrap();
    let b = bin(dir.path());
    for (typed, meant) in [
        ("stat", "did you mean 'status'?"),
        ("chekpoint", "did you mean 'checkpoint'?"),
        ("resum", "did you mean one of 'resume', 'resume-map'?"),
        ("hitsory", "did you mean 'history'?"),
        ("frobnicate", "run `forgestate --help` for the verbs"),
        ("s", "run `forgestate --help` for the verbs"),
    ] {
        let out = b.line(typed);
        assert_eq!(out.status.code(), Some(64), "{typed}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("unrecognized verb '{typed}'; {meant}")),
            "{err}"
        );
        assert!(!err.contains("rotate"), "{err}");
    }
}

#[test]
fn json_alone_is_unchanged_before_or_after_the_verb() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path());
    let (after, _) = ok(&b, "list --json");
    let (before, _) = ok(&b, "--json list");
    assert_eq!(after, before);
    let doc: Value = serde_json::from_str(&after).unwrap();
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["complete", "invalid", "offline", "records", "warnings"],
        "{doc}"
    );
    assert!(
        after.starts_with("{\n  \"records\": ["),
        "declaration order, pretty: {after}"
    );
    // `--json` never swallows the verb.
    let (text, _) = ok(&b, "--json resume --agent reviewer --session demo");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["phase"],
        "review_posted"
    );
}

#[test]
fn json_fields_select_top_level_fields_and_a_bad_one_lists_the_valid_ones() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path());
    let (text, _) = ok(
        &b,
        "resume --agent reviewer --session demo --json=resume_point,phase",
    );
    assert_eq!(
        text,
        "{\n  \"resume_point\": \"start\",\n  \"phase\": \"review_posted\"\n}\n"
    );
    let (text, _) = ok(&b, "--json=records list");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc.as_object().unwrap().len(), 1);
    assert_eq!(doc["records"].as_array().unwrap().len(), 3);

    // A gh user's `list --json agent,phase`: one line naming the valid fields, exit 64, and
    // the error document on stdout.
    let out = b.line("list --json=agent,phase");
    assert_eq!(out.status.code(), Some(64));
    let err = stderr(&out);
    assert!(
        err.contains("unknown fields \"agent\", \"phase\"; the answer's fields are: complete, invalid, offline, records, warnings"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], 64);
    // A write with a bad field is refused before anything is posted.
    let out = b.line("checkpoint --agent w --session s --phase p --json=nope");
    assert_eq!(out.status.code(), Some(64));
    assert!(
        stderr(&out).contains("the answer's fields are: "),
        "{}",
        stderr(&out)
    );
    let (text, _) = ok(&b, "list --json");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        doc["records"].as_array().unwrap().len(),
        3,
        "nothing was posted"
    );
}

#[test]
fn jq_filters_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path());
    let (text, _) = ok(&b, "list --jq .records[].agent");
    assert_eq!(
        text,
        "implementation-worker\nimplementation-worker\nreviewer\n"
    );
    let out = b.run(&[
        "list".to_string(),
        "--jq".to_string(),
        "[.records[] | select(.agent == \"reviewer\") | .phase]".to_string(),
    ]);
    assert_eq!(stdout(&out), "[\"review_posted\"]\n", "{}", stderr(&out));
    let (text, _) = ok(&b, "status --json=rows --jq .rows|length");
    assert_eq!(text, "2\n");
    let out = b.line("list --jq .[");
    assert_eq!(out.status.code(), Some(64));
    assert!(
        stderr(&out).contains("is not a jq expression jaq can parse"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn jq_cannot_read_the_environment_and_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path()).env("FORGESTATE_TOKEN", "tok-abcdef0123456789abcdef0123456789");
    for expr in ["env", "env.FORGESTATE_TOKEN", "$ENV"] {
        let out = b.run(&["list".to_string(), "--jq".to_string(), expr.to_string()]);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(64), "{expr}: {all}");
        assert!(
            !all.contains("abcdef0123456789"),
            "{expr} printed the token: {all}"
        );
    }
}

#[test]
fn flush_on_the_local_store_says_there_is_nothing_to_flush() {
    let dir = tempfile::tempdir().unwrap();
    let b = seeded(dir.path());
    let (out, err) = ok(&b, "flush");
    assert_eq!(
        out.trim(),
        "nothing to flush: the local store writes each record in place, with no outbox"
    );
    assert_eq!(err, "", "quiet on stderr");
    let (out, _) = ok(&b, "outbox");
    assert!(out.contains("no outbox"), "on stdout: {out}");
}
