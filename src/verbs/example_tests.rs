//! A verb that exists only in the library's tests, to show (and keep true) what adding a verb
//! takes: this module (request, answer, `impl Verb` with its CLI text, `impl Run`, `impl
//! cli::Command`) and one line in the table. The tests below find it in the table, in
//! `schema`, among the MCP tools, behind `verbs::call` (which `forgestate call` and the Python
//! package run), and on the CLI: its subcommand with its flag in `--help`, the completions and
//! the man page, run the way the binary runs every verb (`verbs::visit`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ALL, Context, Face, Run, Spec, Verb};
use crate::error::Result;

/// `example`: what to say back.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ExampleRequest {
    /// The words to say back.
    #[cfg_attr(feature = "cli", arg(long))]
    pub words: String,
    /// How many times.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub times: Option<u32>,
}

/// What `example` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExampleAnswer {
    /// The words, `times` times.
    pub said: String,
}

/// Example.
pub struct Example;

impl Verb for Example {
    type Request = ExampleRequest;
    type Answer = ExampleAnswer;
    const DECLARED: Spec = Spec {
        name: "example",
        title: "Say it back",
        description: "Says the words back, for the table's own tests.",
        faces: ALL,
        opens_store: false,
        example: r#"{"words": "hi", "times": 2}"#,
        examples: "  forgestate example --words hi --times 2",
        ..Spec::PURE
    };
}

impl Run for Example {
    async fn run(_: &Context<'_>, r: ExampleRequest) -> Result<ExampleAnswer> {
        let times = usize::try_from(r.times.unwrap_or(1)).unwrap_or(1);
        Ok(ExampleAnswer {
            said: vec![r.words; times].join(" "),
        })
    }
}

#[cfg(feature = "cli")]
impl super::cli::Command for Example {
    type Flags = ExampleRequest;

    fn show(_: &ExampleRequest, answer: ExampleAnswer, p: &impl super::cli::Printer) -> u8 {
        p.answer(&answer, |a| format!("said: {}", a.said))
    }
}

#[tokio::test]
async fn a_verb_added_in_two_places_reaches_every_face() {
    let spec = super::spec("example").expect("in the table");
    assert!(spec.on(Face::Mcp) && spec.on(Face::Python));
    let schema = super::SchemaAnswer::new();
    let doc = schema
        .verbs
        .iter()
        .find(|v| v.name == "example")
        .expect("in `forgestate schema`");
    assert_eq!(doc.request["required"], serde_json::json!(["words"]));
    let dir = tempfile::tempdir().unwrap();
    let client = crate::Client::local(dir.path()).unwrap();
    let policy = crate::report::StatusPolicy::default();
    let ctx = Context {
        client: &client,
        policy: &policy,
    };
    // As MCP and `forgestate call` send it: JSON arguments, an integer as a numeric string too.
    let args = serde_json::json!({"words": "hi", "times": "2"});
    let answer = super::call(&ctx, "example", args).await.expect("runs");
    assert_eq!(answer.unwrap(), serde_json::json!({"said": "hi hi"}));
    let refused = super::call(&ctx, "example", serde_json::json!({})).await;
    assert!(refused.expect("runs").is_err(), "words is required");
}

/// The CLI the table makes: `forgestate` with every verb's subcommand.
#[cfg(feature = "cli")]
fn cli() -> clap::Command {
    clap::Command::new("forgestate").subcommands(super::commands())
}

#[cfg(feature = "cli")]
#[tokio::test]
async fn a_verb_added_in_two_places_is_on_the_cli() {
    let mut cli = cli();
    let help = cli
        .find_subcommand_mut("example")
        .expect("a subcommand")
        .render_long_help()
        .to_string();
    assert!(help.contains("--words <WORDS>"), "{help}");
    assert!(help.contains("The words to say back"), "{help}");
    assert!(help.starts_with("Say it back"), "{help}");
    assert!(help.contains("forgestate example --words hi"), "{help}");
    let mut completions = Vec::new();
    clap_complete::generate(
        clap_complete::Shell::Bash,
        &mut cli,
        "forgestate",
        &mut completions,
    );
    let completions = String::from_utf8_lossy(&completions);
    assert!(
        completions.contains("forgestate__subcmd__example)"),
        "{completions}"
    );
    assert!(completions.contains("--words"), "the flag completes");
    let mut man = Vec::new();
    let page = cli
        .find_subcommand("example")
        .expect("a subcommand")
        .clone();
    clap_mangen::Man::new(page.name("forgestate-example"))
        .render(&mut man)
        .unwrap();
    let man = String::from_utf8_lossy(&man);
    assert!(man.contains("words"), "{man}");

    let matches = cli
        .try_get_matches_from(["forgestate", "example", "--words", "hi", "--times", "3"])
        .unwrap();
    let (name, flags) = matches.subcommand().expect("the verb");
    let dir = tempfile::tempdir().unwrap();
    let client = crate::Client::local(dir.path()).unwrap();
    let policy = crate::report::StatusPolicy::default();
    let ctx = Context {
        client: &client,
        policy: &policy,
    };
    let visitor = Runner {
        ctx: &ctx,
        matches: flags,
    };
    let ran = super::visit(name, visitor)
        .flatten()
        .expect("a library verb");
    let answer = ran.await.unwrap();
    assert_eq!(answer, serde_json::json!({"said": "hi hi hi"}));
}

/// What the binary does with a verb of the table, over a store opened here: the verb found by
/// its name, its flags made into its request, run as every face runs it; the answer as JSON.
#[cfg(feature = "cli")]
struct Runner<'a> {
    ctx: &'a Context<'a>,
    matches: &'a clap::ArgMatches,
}

#[cfg(feature = "cli")]
impl<'a> super::cli::Visit for Runner<'a> {
    type Out = Option<std::pin::Pin<Box<dyn Future<Output = Result<serde_json::Value>> + 'a>>>;

    fn visit_library<V: super::cli::Command + 'static>(self) -> Self::Out {
        use clap::FromArgMatches;
        Some(Box::pin(async move {
            let flags = V::Flags::from_arg_matches(self.matches)
                .map_err(|e| crate::Error::usage(e.to_string()))?;
            let request = super::cli::MakeRequest::request(&flags)?;
            super::answer_value::<V>(&super::run::<V>(self.ctx, request).await?)
        }))
    }
}
