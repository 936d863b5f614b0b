//! MCP's first text is the CLI's text: for every verb that is a tool, its example request (its
//! spec's `example`, in table order on one fake forge) runs on the CLI without `--json` and over
//! MCP, and the tool result's first text is what the command printed (its notes on stderr, then
//! stdout), on a pipe. No list of verbs is kept here: a new tool is checked by being in the table.

use forgestate::verbs::{self, Face};
use serde_json::Value;

use crate::common::cli::{Bin, stderr, stdout};
use crate::common::examples::{cli_args, example};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use crate::mcp_client::{call as mcp_call, connect, ok, text};

/// What the command printed, as MCP words it: each note on stderr without the `forgestate: `
/// before it, then stdout.
fn printed(out: &std::process::Output) -> String {
    let notes = stderr(out);
    let notes = notes
        .lines()
        .map(|l| l.strip_prefix("forgestate: ").unwrap_or(l));
    let out = stdout(out);
    let lines: Vec<&str> = notes.chain(out.trim_end().lines()).collect();
    lines.join("\n")
}

/// `text` with what the clock moves between two reads (an age: `just now`, `5s ago`) made one
/// word.
fn ageless(text: &str) -> String {
    text.split('\t')
        .map(|cell| {
            let age = cell == "just now"
                || cell.strip_suffix(" ago").is_some_and(|n| {
                    n.trim_end_matches(char::is_alphabetic)
                        .parse::<u64>()
                        .is_ok()
                });
            if age { "AGE" } else { cell }
        })
        .collect::<Vec<_>>()
        .join("\t")
}

/// `text` with every word holding a digit (a record id, a comment number, a time) made `#`: two
/// writes of one request differ only there.
fn shape(text: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match word.chars().any(|c| c.is_ascii_digit()) {
            true => out.push('#'),
            false => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tools_first_text_is_the_clis_text_of_the_same_request() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let (client, _stderr) = connect(&bin, "").await;
    let mut wrong = Vec::new();
    let mut tools = 0;
    for spec in verbs::table().into_iter().filter(|s| s.on(Face::Mcp)) {
        let (args, stdin) = cli_args(spec);
        let run = || {
            let out = match &stdin {
                Some(text) => bin.clone().stdin(text.clone()).run(&args),
                None => bin.run(&args),
            };
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            printed(&out)
        };
        let before = run();
        let result = mcp_call(&client, spec.name, Value::Object(example(spec))).await;
        ok(&result);
        // A write runs on the CLI again after MCP: an idempotent one (`publish`) answers alike
        // only once the store is as the same request leaves it.
        let cli = match spec.read_only {
            true => before,
            false => run(),
        };
        let mcp = text(&result).to_string();
        assert!(!cli.is_empty(), "{}: the CLI printed nothing", spec.name);
        // A read shows the same answer twice; a write saves a second record, with its own id.
        let same = match spec.read_only {
            true => ageless(&cli) == ageless(&mcp),
            false => shape(&cli) == shape(&mcp),
        };
        if !same {
            wrong.push(format!("{}:\nCLI: {cli}\nMCP: {mcp}", spec.name));
        }
        tools += 1;
    }
    client.cancel().await.ok();
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    let table = verbs::table();
    assert_eq!(tools, table.iter().filter(|s| s.on(Face::Mcp)).count());
    assert!(tools > 0);
}

#[test]
fn shape_and_ageless_hide_only_what_they_say() {
    assert_eq!(
        shape("checkpoint 0193-ab saved as comment 12 in http://h:8080/x"),
        "checkpoint # saved as comment # in http://h:#/x"
    );
    assert_eq!(ageless("alive\tw\ts1\tjust now\tp"), "alive\tw\ts1\tAGE\tp");
    assert_eq!(ageless("alive\tw\ts1\t5s ago\tp"), "alive\tw\ts1\tAGE\tp");
    assert_eq!(ageless("alive\tw\tsoon ago\tp"), "alive\tw\tsoon ago\tp");
}
