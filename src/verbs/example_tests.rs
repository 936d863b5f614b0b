//! A verb that exists only in the library's tests, to show (and keep true) what adding a verb
//! takes: this module (request, answer, `impl Verb`, `impl Run`) and one line in the table. The
//! third place, its renderer, is the CLI's text for it (`--json` and every other face need
//! none). The test below finds it in the table, in `schema`, among the MCP tools and behind
//! `verbs::call`, which `forgestate call` and the Python package run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ALL, Context, Face, Run, Spec, Verb, answer_schema, request_schema};
use crate::error::Result;

/// `example`: what to say back.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExampleRequest {
    /// The words to say back.
    pub words: String,
    /// How many times.
    #[serde(default)]
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
    const SPEC: Spec = Spec {
        name: "example",
        title: "Say it back",
        description: "Says the words back, for the table's own tests.",
        faces: ALL,
        opens_store: false,
        example: r#"{"words": "hi", "times": 2}"#,
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
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
