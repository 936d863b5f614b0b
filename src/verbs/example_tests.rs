//! A verb that exists only in the library's tests, to show (and keep true) what adding a verb
//! takes: this module (request, answer, `impl Verb`, `impl Run`, `impl cli::Command` with its
//! CLI text) and one line in the table. The tests below find it in the table, in `schema`, among
//! the MCP tools, behind `verbs::call` (which `forgestate call` and the Python package run), and
//! on the CLI: its subcommand with its flag in `--help`, the completions and the man page, run
//! the way the binary runs every verb (`verbs::visit`).

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
        human: |a| a["said"].as_str().map(|s| format!("said: {s}")),
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
    for json in [false, true] {
        let printer = Recorder {
            json,
            out: Default::default(),
        };
        let visitor = Runner {
            ctx: &ctx,
            matches: flags,
            printer: &printer,
        };
        let code = super::visit(name, visitor).expect("a verb").await.unwrap();
        assert_eq!(code, 0);
        let out = printer.out.borrow().join("\n");
        match json {
            false => assert_eq!(out, "said: hi hi hi"),
            true => assert_eq!(out, r#"{"said":"hi hi hi"}"#),
        }
    }
}

/// What a face does with a verb of the table: the binary's own visitor, over a store opened here.
#[cfg(feature = "cli")]
struct Runner<'a> {
    ctx: &'a Context<'a>,
    matches: &'a clap::ArgMatches,
    printer: &'a Recorder,
}

#[cfg(feature = "cli")]
impl<'a> super::cli::Visit for Runner<'a> {
    type Out = std::pin::Pin<Box<dyn Future<Output = Result<u8>> + 'a>>;

    fn visit<V: super::cli::Command + 'static>(self) -> Self::Out {
        use clap::FromArgMatches;
        Box::pin(async move {
            let flags = V::Flags::from_arg_matches(self.matches)
                .map_err(|e| crate::Error::usage(e.to_string()))?;
            let request = super::cli::MakeRequest::request(&flags)?;
            V::call(self.ctx, &flags, request, self.printer).await
        })
    }

    fn visit_machine<V: super::cli::OnMachine + 'static>(self) -> Self::Out {
        Box::pin(async { Err(crate::Error::usage("the example runs no machine verb")) })
    }

    fn visit_stream<V: super::cli::Streams + 'static>(self) -> Self::Out {
        Box::pin(async { Err(crate::Error::usage("the example runs no stream")) })
    }
}

/// A printer that keeps what a verb prints.
#[cfg(feature = "cli")]
struct Recorder {
    json: bool,
    out: std::cell::RefCell<Vec<String>>,
}

#[cfg(feature = "cli")]
impl super::cli::Printer for Recorder {
    fn json_mode(&self) -> bool {
        self.json
    }
    fn quiet(&self) -> bool {
        false
    }
    fn strict(&self) -> bool {
        false
    }
    fn json_line<T: Serialize>(&self, value: &T) {
        self.json(value)
    }
    fn json<T: Serialize>(&self, value: &T) {
        let text = serde_json::to_string(value).unwrap_or_default();
        self.out.borrow_mut().push(text);
    }
    fn json_failed<T: Serialize>(&self, value: &T, _: u8, _: &str) {
        self.json(value);
    }
    fn page<T: Serialize>(&self, value: &T) {
        self.json(value);
    }
    fn out(&self, text: &str) {
        self.out.borrow_mut().push(text.to_string());
    }
    fn note(&self, _: &str) {}
    fn layout(&self) -> super::cli::table::Layout {
        super::cli::table::Layout::Piped
    }
    fn color(&self) -> bool {
        false
    }
    fn printable(&self, text: &str) -> String {
        text.to_string()
    }
    fn error_object(&self, e: &crate::Error) -> super::FlushError {
        super::FlushError {
            code: 1,
            category: e.category().name().to_string(),
            message: e.to_string(),
            reason: None,
        }
    }
}
