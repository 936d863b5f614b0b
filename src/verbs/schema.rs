//! `schema`: this table, every verb's nature, faces and the JSON Schemas of its request and
//! answer.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{CLI, Context, Face, Run, Spec, Verb};
use crate::error::Result;

/// `schema` takes nothing.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaRequest {}

/// One verb in `schema`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VerbDoc {
    /// The verb's name.
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// What it does, for a model.
    pub description: &'static str,
    /// It changes nothing.
    pub read_only: bool,
    /// It may delete or overwrite.
    pub destructive: bool,
    /// Repeating it has no further effect.
    pub idempotent: bool,
    /// It may reach a forge over the network.
    pub open_world: bool,
    /// The faces that expose it.
    pub faces: &'static [Face],
    /// How it runs: `library` (behind `forgestate call` and MCP), `machine` (over this
    /// machine's configuration: `forgestate --json VERB`) or `streams` (a stream of events).
    pub runs: &'static str,
    /// Each request field's CLI form: its flag (`--blocker`, given once per item of a list), or
    /// `<FILE|->` for one read from a file or stdin.
    pub flags: BTreeMap<String, String>,
    /// The arguments a program may pass in order (the Python package's positional ones).
    pub positional: Vec<String>,
    /// The request's JSON Schema.
    pub request: Map<String, Value>,
    /// The answer's JSON Schema.
    pub answer: Map<String, Value>,
}

/// What `schema` answers: the verb table.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SchemaAnswer {
    /// Every verb.
    pub verbs: Vec<VerbDoc>,
}

impl SchemaAnswer {
    /// The whole table.
    pub fn new() -> SchemaAnswer {
        let verbs = super::table()
            .into_iter()
            .map(|s| {
                let request = (s.request)();
                VerbDoc {
                    name: s.name,
                    title: s.title,
                    description: s.description,
                    read_only: s.read_only,
                    destructive: s.destructive,
                    idempotent: s.idempotent,
                    open_world: s.open_world,
                    faces: s.faces,
                    runs: super::runs(s.name).unwrap_or(super::Runs::Library).name(),
                    flags: s.cli_flags(),
                    positional: super::positional::positional(s.name, &request),
                    request,
                    answer: (s.answer)(),
                }
            })
            .collect();
        SchemaAnswer { verbs }
    }
}

impl Run for Schema {
    async fn run(_: &Context<'_>, _: SchemaRequest) -> Result<SchemaAnswer> {
        Ok(SchemaAnswer::new())
    }
}

impl Default for SchemaAnswer {
    fn default() -> Self {
        SchemaAnswer::new()
    }
}

/// Schema.
pub struct Schema;

impl Verb for Schema {
    type Request = SchemaRequest;
    type Answer = SchemaAnswer;
    const DECLARED: Spec = Spec {
        name: "schema",
        title: "The verb table",
        description: "Every verb with its nature (read-only, destructive, idempotent, reaching \
            the network), the faces that expose it, and the JSON Schemas of its request and \
            answer.",
        faces: CLI,
        opens_store: false,
        example: "{}",
        about: "Print the verb table as one JSON object: every verb's nature, faces, and the JSON Schemas of its request and answer",
        examples: "  forgestate schema
  forgestate schema | jq '.verbs[] | select(.read_only) | .name'",
        ..Spec::PURE
    };
}

#[cfg(feature = "cli")]
impl super::cli::Command for Schema {
    type Flags = SchemaRequest;

    /// The table as JSON, with or without `--json`.
    fn show(_: &SchemaRequest, answer: SchemaAnswer, p: &impl super::cli::Printer) -> u8 {
        p.page(&answer);
        0
    }

    fn alone(_: &SchemaRequest) -> Option<Result<SchemaAnswer>> {
        Some(Ok(SchemaAnswer::new()))
    }
}
