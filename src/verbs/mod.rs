//! The verb table: every verb once, as one typed request, one typed answer and its nature, from
//! which every face (the CLI, the MCP server, the Python package) is generated.
//!
//! A verb is a type implementing [`Verb`]: its [`Spec`] (name, title, a description written for
//! a model, whether it is read-only, destructive, idempotent or reaches the network, and which
//! faces expose it) and its `Request` and `Answer` types (serde + schemars: their JSON Schemas
//! are what `forgestate schema` prints and what MCP's `inputSchema`/`outputSchema` are). A verb
//! the library runs also implements [`Run`], with all its policy (redaction, the outbox drain,
//! the automatic rotation after a save).
//!
//! **Adding a verb**: its request, answer and `impl Verb`/`impl Run`/`impl cli::Command` in a
//! file of its own, named after it (its `DECLARED` spec on one of the bases,
//! [`Spec::AGENT_READ`], [`Spec::AGENT_WRITE`], [`Spec::OPERATOR`] or [`Spec::PURE`], with a
//! runnable example request), plus one name in the `verbs!` list below. `forgestate schema` then lists it, the
//! CLI has its subcommand (flags, help, completions, man page), the MCP server serves it when
//! its faces include [`Face::Mcp`], and the table-driven test (`tests/it/faces/table.rs`) runs
//! its example on every face; `example_tests.rs` is such a verb.

mod checkpoint;
#[cfg(feature = "cli")]
pub mod cli;
mod doctor;
mod end;
#[cfg(test)]
#[path = "example_tests.rs"]
mod example;
mod export;
mod filter;
mod flush;
mod fork;
mod health;
mod history;
mod import;
mod init;
pub mod input;
mod latest;
mod list;
mod outbox;
mod parse;
mod plain;
mod positional;
mod prune;
mod publish;
mod render;
mod resume;
mod resume_map;
mod rotate;
mod saved;
mod schema;
mod status;
mod watch;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::Client;
use crate::backend::AnyThread;
use crate::error::{Error, Result};
use crate::report::StatusPolicy;

pub use crate::client::watch::Event;
/// Marks the process's start for the wait rule (first thing in a face's `main`): the first
/// command's deadline includes the process's own start.
#[doc(hidden)]
pub use crate::forge::wait::mark_process_start;
#[cfg(feature = "cli")]
pub use checkpoint::CheckpointFlags;
pub use checkpoint::{Checkpoint, CheckpointRequest};
#[cfg(feature = "cli")]
pub use cli::commands;
pub use doctor::{Doctor, DoctorAnswer, DoctorRequest};
pub use end::{End, EndRequest, check_reason};
pub use export::{Export, ExportRequest};
pub use filter::FilterRequest;
pub use flush::{Flush, FlushAnswer, FlushError, FlushLetter, FlushPosted, FlushRequest};
pub use fork::{Fork, ForkRequest};
#[cfg(feature = "cli")]
pub use health::HealthFlags;
pub use health::{DEFAULT_STATUS, Health, HealthRequest};
pub use history::{History, HistoryAnswer, HistoryRequest};
pub use import::{Import, ImportRequest};
pub use init::{Init, InitAnswer, InitRequest};
pub use latest::{LatestAnswer, LatestRequest, LatestVerb};
pub use list::{ListAnswer, ListRequest, ListVerb};
pub use outbox::{OutboxAnswer, OutboxRequest, Outboxes};
pub use parse::{Parse, ParseAnswer, ParseRequest};
pub use prune::{Prune, PruneAnswer, PruneRequest};
pub use publish::{Publish, PublishRequest};
pub use render::{Render, RenderAnswer, RenderRequest};
pub use resume::{ResumeAnswer, ResumeRequest, ResumeVerb};
pub use resume_map::{RESUME_MAP_AGENT, ResumeMapAnswer, ResumeMapRequest, ResumeMapVerb};
pub use rotate::{Rotate, RotateRequest};
pub use saved::{SaveAnswer, spooled_strict};
pub use schema::{Schema, SchemaAnswer, SchemaRequest, VerbDoc};
#[cfg(feature = "cli")]
pub use status::StatusFlags;
pub use status::{StatusAnswer, StatusRequest, StatusVerb};
pub use watch::{Watch, WatchEvent, WatchRequest};

/// A face: a way a caller reaches the verbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Face {
    /// The `forgestate` command (every verb).
    Cli,
    /// The MCP server's tools (the agent-facing verbs).
    Mcp,
    /// The pip package's `Client` (the agent-facing verbs and the pure ones).
    Python,
}

/// What every face exposes.
pub const ALL: &[Face] = &[Face::Cli, Face::Mcp, Face::Python];
/// The CLI and Python (verbs an agent needs from a program, not as a model's tool).
pub const CLI_PYTHON: &[Face] = &[Face::Cli, Face::Python];
/// The CLI only (operator verbs).
pub const CLI: &[Face] = &[Face::Cli];

/// Who uses a verb: the sections of the CLI's `--help`, in their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// Agents saving and resuming their work.
    Agents,
    /// Supervisors watching a pool of agents.
    Supervisors,
    /// Operators looking after the store and the thread.
    Operators,
    /// Programs and tools built on forgestate.
    Integrations,
}

impl Group {
    /// Every group, in `--help`'s order.
    pub const ALL: [Group; 4] = [
        Group::Agents,
        Group::Supervisors,
        Group::Operators,
        Group::Integrations,
    ];

    /// Its heading in `--help`.
    pub fn heading(self) -> &'static str {
        match self {
            Group::Agents => "Agents",
            Group::Supervisors => "Supervisors",
            Group::Operators => "Operators",
            Group::Integrations => "Integrations",
        }
    }
}

/// One verb's description: what a face needs to expose it.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The verb's name on every face (`resume`, `resume-map`).
    pub name: &'static str,
    /// A short human title (MCP's `title`).
    pub title: &'static str,
    /// What the verb does and when to call it, written for a model (no hard line breaks).
    pub description: &'static str,
    /// It changes nothing.
    pub read_only: bool,
    /// It may delete or overwrite (meaningful when not read-only).
    pub destructive: bool,
    /// Calling it again with the same request has no further effect.
    pub idempotent: bool,
    /// It may reach a forge over the network (a local store, or no store, does not).
    pub open_world: bool,
    /// The faces that expose it.
    pub faces: &'static [Face],
    /// Who uses it: the section of `--help` that lists it.
    pub group: Group,
    /// It saves a record, so `--strict` (a spooled record is a failure) means something to it.
    pub strict: bool,
    /// It reads the thread through the read cache, which `--refresh` rebuilds.
    pub reads_thread: bool,
    /// It opens a store or reads the configuration: the store and forge flags mean something
    /// to it (`parse` and `schema` need neither).
    pub opens_store: bool,
    /// Request fields whose CLI flag is not the field's name in kebab case: `(field, flag)`. A
    /// `*_secs` field may be a duration flag (`warn_after_secs` is `--warn-after 10m`), and a
    /// list a repeated singular flag (`blockers` is `--blocker`, given once per item).
    pub flags: &'static [(&'static str, &'static str)],
    /// The request's JSON Schema (filled in by [`Verb::SPEC`]).
    pub request: fn() -> Map<String, Value>,
    /// The answer's JSON Schema (of one event, for `watch`; filled in by [`Verb::SPEC`]).
    pub answer: fn() -> Map<String, Value>,
    /// One request that runs (JSON text): the table-driven tests run it on every face that has
    /// the verb, after the examples of the verbs before it, on a fresh forge.
    pub example: &'static str,
    /// The CLI's one line about the verb in `--help` (empty: the title).
    pub about: &'static str,
    /// The CLI's paragraph after the verb's flags in `--help`, before its examples (empty: none).
    pub after: &'static str,
    /// The CLI's examples, one command line each, after the verb's `--help`.
    pub examples: &'static str,
}

impl Spec {
    /// The base of a verb agents read with: read-only, on every face, reading the thread. A
    /// verb's spec states its name, title, description and example, and only what
    /// differs from its base (`..Spec::AGENT_READ`).
    pub const AGENT_READ: Spec = Spec {
        read_only: true,
        idempotent: true,
        reads_thread: true,
        ..Spec::BLANK
    };
    /// The base of a verb agents save a record with: not idempotent, on every face, `--strict`.
    pub const AGENT_WRITE: Spec = Spec {
        strict: true,
        ..Spec::BLANK
    };
    /// The base of an operator's verb: idempotent, on the CLI and Python, among the operators'.
    pub const OPERATOR: Spec = Spec {
        idempotent: true,
        faces: CLI_PYTHON,
        group: Group::Operators,
        ..Spec::BLANK
    };
    /// The base of a verb of the format alone: read-only, no network, on the CLI and Python,
    /// among the integrations'.
    pub const PURE: Spec = Spec {
        read_only: true,
        idempotent: true,
        open_world: false,
        faces: CLI_PYTHON,
        group: Group::Integrations,
        ..Spec::BLANK
    };
    /// What the bases start from: a write that may reach the network, on every face.
    const BLANK: Spec = Spec {
        name: "",
        title: "",
        description: "",
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
        faces: ALL,
        group: Group::Agents,
        strict: false,
        reads_thread: false,
        opens_store: true,
        flags: &[],
        request: Map::new,
        answer: Map::new,
        example: "{}",
        about: "",
        after: "",
        examples: "",
    };

    /// Whether `face` exposes the verb.
    pub fn on(&self, face: Face) -> bool {
        self.faces.contains(&face)
    }

    /// Each request field and its CLI form: `--flag` (the spec's own name for it, `*` standing
    /// for every field, else the field's name in kebab case), or `<FILE|->` for a field read
    /// from a positional file.
    pub fn cli_flags(&self) -> BTreeMap<String, String> {
        let request = (self.request)();
        let fields = request.get("properties").and_then(Value::as_object);
        fields
            .into_iter()
            .flat_map(|f| f.keys())
            .map(|field| {
                let named = self
                    .flags
                    .iter()
                    .find(|(f, _)| f == field || *f == "*")
                    .map(|(_, flag)| *flag);
                let flag = match named {
                    Some(form) if form.starts_with('<') => form.to_string(),
                    Some(flag) => format!("--{flag}"),
                    None => format!("--{}", field.replace('_', "-")),
                };
                (field.clone(), flag)
            })
            .collect()
    }
}

/// A verb: its spec and its typed request and answer.
pub trait Verb {
    /// What the verb takes.
    type Request: DeserializeOwned + JsonSchema + Send;
    /// What it answers (always a JSON object).
    type Answer: Serialize + JsonSchema;
    /// Its description as its file writes it, on one of the bases (its schemas left out).
    const DECLARED: Spec;
    /// Its description, with the JSON Schemas of its request and answer.
    const SPEC: Spec = Spec {
        request: request_schema::<Self::Request>,
        answer: answer_schema::<Self::Answer>,
        ..Self::DECLARED
    };
}

/// What a verb runs with: the opened client and the configured policies.
pub struct Context<'a> {
    /// The client over the configured store.
    pub client: &'a Client<AnyThread>,
    /// The `[status]` thresholds and final resume points.
    pub policy: &'a StatusPolicy,
}

/// A verb the library runs, with all its policy.
pub trait Run: Verb {
    /// Runs the verb.
    fn run(
        ctx: &Context<'_>,
        request: Self::Request,
    ) -> impl Future<Output = Result<Self::Answer>> + Send;
}

/// The JSON Schema of what `T` accepts (a request), draft 2020-12, root title dropped.
pub fn request_schema<T: JsonSchema>() -> Map<String, Value> {
    let mut schema = schema_with::<T>(schemars::generate::SchemaSettings::draft2020_12());
    plain::request(&mut schema);
    schema
}

/// The JSON Schema of what `T` writes (an answer), draft 2020-12, root title dropped.
pub fn answer_schema<T: JsonSchema>() -> Map<String, Value> {
    let mut schema =
        schema_with::<T>(schemars::generate::SchemaSettings::draft2020_12().for_serialize());
    plain::answer(&mut schema);
    schema
}

fn schema_with<T: JsonSchema>(settings: schemars::generate::SchemaSettings) -> Map<String, Value> {
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut root = serde_json::to_value(schema).unwrap_or_default();
    unwrap_descriptions(&mut root);
    // A schema is always an object; an empty one accepts anything.
    let Value::Object(mut map) = root else {
        return Map::new();
    };
    map.remove("title");
    inline_root(&mut map);
    map
}

/// An answer that is another named type (a `transparent` wrapper: `parse` answers the record)
/// is written by schemars as a bare `$ref`; every face wants an object schema at the root (MCP's
/// output schemas must be one), so the definition's keywords move to the root (the root's own
/// description wins), and the definition goes unless something inside still names it.
fn inline_root(map: &mut Map<String, Value>) {
    if map.contains_key("type") {
        return;
    }
    let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .map(str::to_string)
    else {
        return;
    };
    let Some(Value::Object(def)) = map.get("$defs").and_then(|d| d.get(&name)).cloned() else {
        return;
    };
    map.remove("$ref");
    for (key, value) in def {
        map.entry(key).or_insert(value);
    }
    let reference = format!("\"#/$defs/{name}\"");
    let named = serde_json::to_string(&map).is_ok_and(|text| text.contains(&reference));
    if !named && let Some(Value::Object(defs)) = map.get_mut("$defs") {
        defs.remove(&name);
        if defs.is_empty() {
            map.remove("$defs");
        }
    }
}

/// Doc comments wrap at 100 columns and schemars keeps their line breaks: a model reads a
/// description as prose, so a single line break becomes a space (blank lines stay paragraphs).
fn unwrap_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(text) if key == "description" => {
                        *text = unlink(&unwrap_lines(text));
                    }
                    v => unwrap_descriptions(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|para| {
            para.split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A rustdoc link (``[`Conflict`]``) is code to a model: the brackets go, the code stays.
fn unlink(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        let after = &rest[start + 1..];
        match after[1..].find('`').map(|i| i + 2) {
            Some(end) if after[end..].starts_with(']') && !after[..end].contains(']') => {
                out.push_str(&rest[..start]);
                out.push_str(&after[..end]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[..start + 2]);
                rest = &rest[start + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The request `args` make for `V`, read as every face reads it: an integer or a boolean sent as
/// text (`"5"`, `"true"`) and a `*_secs` duration sent as an age (`"10m"`) are read as the
/// value, then the object is decoded. The error is serde's, for the face to word.
pub fn decode<V: Verb>(args: Value) -> std::result::Result<V::Request, serde_json::Error> {
    serde_json::from_value(plain::lenient(args, &(V::SPEC.request)()))
}

/// Runs `V` on a decoded request: the one call every face makes (the CLI with the request its
/// flags build, MCP and `call` with the one [`decode`] reads).
pub async fn run<V: Run>(ctx: &Context<'_>, request: V::Request) -> Result<V::Answer> {
    ctx.client.begin_command();
    V::run(ctx, request).await
}

/// Runs `V` on `args`: the request decoded (a mismatch is a usage error naming the field), run,
/// and the answer as a JSON value.
async fn call_one<V: Run>(ctx: &Context<'_>, args: Value) -> Result<Value> {
    answer_value::<V>(&run::<V>(ctx, request_of::<V>(args)?).await?)
}

/// `V`'s request read from `args` as [`decode`] reads it; a mismatch is a usage error naming the
/// field.
fn request_of<V: Verb>(args: Value) -> Result<V::Request> {
    if let Some(unknown) = unknown_argument(&args, &(V::SPEC.request)()) {
        // A request with a flattened part (`latest`, `list`) would let serde skip it: a typo in
        // a filter (`"agnet"`) must not answer for every agent.
        return Err(Error::usage(format!(
            "the arguments of {} do not fit its schema: {unknown}",
            V::SPEC.name
        )));
    }
    input::name_lengths(&args)?;
    decode::<V>(args.clone()).map_err(|e| {
        let field = culprit::<V>(&args, &e.to_string())
            .map(|k| format!("`{k}`"))
            .filter(|k| !e.to_string().contains(k.as_str()))
            .map_or(String::new(), |k| format!("{k}: "));
        Error::usage(format!(
            "the arguments of {} do not fit its schema: {field}{e}",
            V::SPEC.name
        ))
    })
}

/// The first argument a closed request schema (`additionalProperties: false`) has no property
/// for, worded as serde words it. An open one (`render`'s record, whose extra keys are ignored)
/// takes any.
fn unknown_argument(args: &Value, schema: &Map<String, Value>) -> Option<String> {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let (Value::Object(args), Some(Value::Object(props))) = (args, schema.get("properties")) else {
        return None;
    };
    let key = args.keys().find(|k| !props.contains_key(k.as_str()))?;
    let known: Vec<String> = props.keys().map(|k| format!("`{k}`")).collect();
    Some(format!(
        "unknown field `{key}`, expected one of {}",
        known.join(", ")
    ))
}

/// The argument a decoding error (`error`) is about, which serde names only when it is missing
/// or unknown: the one that fails alone with that error.
fn culprit<V: Verb>(args: &Value, error: &str) -> Option<String> {
    // serde names a missing field itself; any argument given fails alone with it too.
    let Value::Object(map) = args else {
        return None;
    };
    if error.starts_with("missing field") {
        return None;
    }
    map.iter()
        .find(|(key, value)| {
            let alone = Value::Object([((*key).clone(), (*value).clone())].into_iter().collect());
            decode::<V>(alone).is_err_and(|e| e.to_string() == error)
        })
        .map(|(key, _)| key.clone())
}

/// `V`'s answer as a JSON value.
fn answer_value<V: Verb>(answer: &V::Answer) -> Result<Value> {
    serde_json::to_value(answer).map_err(|e| {
        Error::invalid(format!(
            "cannot serialize the answer of {}: {e}",
            V::SPEC.name
        ))
    })
}

/// Who runs a verb (the marks in the table below).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// The library, through [`call`], for every face.
    Library,
    /// Each face: the answer is a stream of events (`watch`).
    Streams,
    /// The CLI, over this machine's configuration and outboxes (`flush`, `outbox`, `doctor`).
    Machine,
}

impl Runs {
    /// Its name in `forgestate schema`: `library`, `streams` or `machine`.
    pub fn name(self) -> &'static str {
        match self {
            Runs::Library => "library",
            Runs::Streams => "streams",
            Runs::Machine => "machine",
        }
    }
}

/// The table: every verb in the order `--help` lists them. The library runs each, except those
/// marked: `streams` answers with a stream of events, which each face runs itself (`watch`);
/// `host` works on this machine's configuration and outboxes rather than one opened store, and
/// the CLI runs it by its module's own [`cli::CliVerb`] over what the binary lends (`flush`,
/// `outbox`, `doctor`).
macro_rules! verbs {
    ($($(#[$cfg:meta])* $verb:ty $(: $how:ident)?),* $(,)?) => {
        /// Every verb, in the order `--help` lists them.
        #[allow(clippy::vec_init_then_push)] // a `#[cfg]` may stand on each push
        pub fn table() -> Vec<&'static Spec> {
            let mut table: Vec<&'static Spec> = Vec::new();
            $(
                $(#[$cfg])*
                table.push(&<$verb as Verb>::SPEC);
            )*
            table
        }

        /// Who runs the verb named `name`: the library through [`call`], or each face (the
        /// marked ones); `None` when no verb has that name.
        pub fn runs(name: &str) -> Option<Runs> {
            $(
                $(#[$cfg])*
                if name == <$verb as Verb>::SPEC.name {
                    return Some(verbs!(@runs $verb $(: $how)?));
                }
            )*
            None
        }

        /// Visits the verb named `name` with its type (what the CLI runs each verb with);
        /// `None` when no verb has that name.
        #[cfg(feature = "cli")]
        pub fn visit<T: cli::Visit>(name: &str, visitor: T) -> Option<T::Out> {
            $(
                $(#[$cfg])*
                if name == <$verb as Verb>::SPEC.name {
                    return verbs!(@visit $verb $(: $how)?, visitor);
                }
            )*
            let _ = visitor;
            None
        }

        /// Runs the verb named `name` on the JSON arguments `args`; `None` when the library
        /// does not run a verb of that name (none has it, or it is marked above).
        pub async fn call(ctx: &Context<'_>, name: &str, args: Value) -> Option<Result<Value>> {
            $(
                $(#[$cfg])*
                if name == <$verb as Verb>::SPEC.name {
                    return verbs!(@call $verb $(: $how)?, ctx, args);
                }
            )*
            let _ = (ctx, args);
            None
        }

    };
    (@call $verb:ty, $ctx:ident, $args:ident) => {
        Some(call_one::<$verb>($ctx, $args).await)
    };
    (@call $verb:ty: $how:ident, $ctx:ident, $args:ident) => {
        None
    };
    (@visit $verb:ty, $visitor:ident) => {
        Some($visitor.visit_library::<$verb>())
    };
    (@visit $verb:ty: $how:ident, $visitor:ident) => {
        Some($visitor.visit::<$verb>())
    };
    (@runs $verb:ty) => {
        Runs::Library
    };
    (@runs $verb:ty: streams) => {
        Runs::Streams
    };
    (@runs $verb:ty: host) => {
        Runs::Machine
    };
}

verbs! {
    Checkpoint, Health, End, ResumeVerb, LatestVerb, ListVerb, Fork,
    StatusVerb, History, Watch: streams, Publish,
    Init, Flush: host, Outboxes: host, Prune, Rotate, Export, Import, Doctor: host,
    Render, Parse, ResumeMapVerb, Schema,
    #[cfg(test)]
    example::Example,
}

/// The spec of the verb named `name`.
pub fn spec(name: &str) -> Option<&'static Spec> {
    table().into_iter().find(|s| s.name == name)
}
