//! The CLI's face of the table: each verb's subcommand is built from its spec (`about`,
//! `examples`) and its flags (its request, which derives clap's `Args`, or the request with the
//! command line's extras beside it), runs through the same [`run`](super::run) as every other
//! face, and its answer is shown by the verb's own [`Command::show`]: the one rendering of the
//! answer, which the MCP server also shows on a printer capturing the text ([`shown`]).
//!
//! Every verb, of whichever kind, is a [`CliVerb`]: its flags, and a run over what the binary
//! lends ([`Host`]: the configuration, the store) that shows its answer on the binary's
//! [`Printer`]. The binary runs each through that one path, by a [`Visit`]; it names no verb.

pub(crate) mod record;
pub mod table;

use std::pin::Pin;

use clap::{Args, Command as Subcommand};
use serde::Serialize;
use serde_json::Value;

use super::{Run, Verb};
use crate::config::Config;
use crate::error::Result;
use crate::report::StatusPolicy;

/// What a verb's text is printed with: the binary's output, and what the command line asked for.
/// By default text, neither quiet nor strict, on a pipe and uncoloured.
pub trait Printer {
    /// `--json` (or `--json=FIELDS`, `--jq`): print the answer as one JSON document.
    fn json_mode(&self) -> bool {
        false
    }
    /// `--quiet`: only errors on stderr.
    fn quiet(&self) -> bool {
        false
    }
    /// `--strict`: a record spooled to the outbox is a failure.
    fn strict(&self) -> bool {
        false
    }
    /// Prints `value` as the answer's JSON document.
    fn json<T: Serialize>(&self, value: &T);
    /// Prints `value` as one compact JSON line (NDJSON: an event of a stream).
    fn json_line<T: Serialize>(&self, value: &T);
    /// Prints forgestate's own JSON (it holds no record, so it need not be scrubbed).
    fn page<T: Serialize>(&self, value: &T) {
        self.json(value);
    }
    /// Prints human text on stdout.
    fn out(&self, text: &str);
    /// A line on stderr; `error: ` and `warning: ` openings get their level's prefix.
    fn note(&self, text: &str);
    /// How a table on stdout is laid out: tab-separated when piped, fitted at a terminal.
    fn layout(&self) -> table::Layout {
        table::Layout::Piped
    }
    /// Whether stdout may be coloured.
    fn color(&self) -> bool {
        false
    }
    /// `text` with every control and invisible character a record's writer may have put in it
    /// made a space, so none reaches the terminal.
    fn printable(&self, text: &str) -> String;
    /// The error object this face writes for `e`: its exit code (by who must act), category
    /// and message on one line.
    fn error_object(&self, e: &crate::Error) -> super::FlushError;
    /// Prints `answer` as its JSON document, or without `--json` the `text` of it; exit 0.
    fn answer<T: Serialize>(&self, answer: &T, text: impl FnOnce(&T) -> String) -> u8 {
        match self.json_mode() {
            true => self.json(answer),
            false => self.out(&text(answer)),
        }
        0
    }
    /// Prints each warning on stderr (not with `--quiet`).
    fn warn(&self, warnings: &[String]) {
        if !self.quiet() {
            for w in warnings {
                self.note(&format!("warning: {w}"));
            }
        }
    }
}

/// What a verb's flags make: its request. Flags that are the request itself make it as they
/// are; flags with the command line's extras beside the request read them in (a file, stdin,
/// `--set`) or check them.
pub trait MakeRequest<R>: Args + Send + Sync {
    /// The request the flags make.
    fn request(&self) -> Result<R>;
}

impl<R: Args + Clone + Send + Sync> MakeRequest<R> for R {
    fn request(&self) -> Result<R> {
        Ok(self.clone())
    }
}

/// A verb on the command line: its flags, the request they make, and how its answer shows.
pub trait Command: Run<Request: Clone> + Sized {
    /// Its flags: the request's (`Self::Request` itself), or the request flattened beside the
    /// command line's extras (`status --publish`, `checkpoint --data-file`).
    type Flags: MakeRequest<Self::Request>;

    /// Shows the answer to `request`, on stdout as JSON or text, and returns the exit code.
    fn show(request: &Self::Request, answer: Self::Answer, p: &impl Printer) -> u8;

    /// Runs the request over `ctx` and shows the answer: [`run`](super::run) then
    /// [`show`](Command::show), unless an extra asks for other work (`status --publish`).
    fn call(
        ctx: &super::Context<'_>,
        _flags: &Self::Flags,
        request: Self::Request,
        p: &impl Printer,
    ) -> impl Future<Output = Result<u8>> {
        async move {
            let answer = super::run::<Self>(ctx, request.clone()).await?;
            Ok(Self::show(&request, answer, p))
        }
    }

    /// The answer without a store, for a verb that opens none (`parse`, `schema`); `None` has
    /// the face run it over the opened store.
    fn alone(_request: &Self::Request) -> Option<Result<Self::Answer>> {
        None
    }
}

/// A verb on the command line, of any kind: its flags, and its run over what the binary lends,
/// which shows the answer. A verb the library runs is one through its [`Command`]; the others
/// implement it themselves: `flush`, `outbox` and `doctor` work on this machine's configuration
/// rather than one opened store, and `watch` shows a stream of events until Ctrl-C or SIGTERM.
pub trait CliVerb: Verb + Sized {
    /// Its flags.
    type Flags: Args + Send + Sync;

    /// Runs the verb on `flags` over what `host` lends, showing its answer on `p`; the exit code.
    fn run_cli(
        flags: &Self::Flags,
        host: &impl Host,
        p: &impl Printer,
    ) -> impl Future<Output = Result<u8>>;
}

impl<V: Command> CliVerb for V {
    type Flags = V::Flags;

    /// The request made from the flags (checked before the store is opened), then the verb run
    /// alone or over the configured store, its answer shown.
    async fn run_cli(flags: &V::Flags, host: &impl Host, p: &impl Printer) -> Result<u8> {
        let request = flags.request()?;
        if !V::SPEC.opens_store
            && let Some(answer) = V::alone(&request)
        {
            return Ok(V::show(&request, answer?, p));
        }
        let (client, policy) = host.store()?;
        let ctx = super::Context {
            client: &client,
            policy: &policy,
        };
        V::call(&ctx, flags, request, p).await
    }
}

/// What the binary lends a verb: the configuration its command line makes, and the store it
/// opens.
pub trait Host {
    /// Opens the store `config` names as every command of the binary does (the machine's
    /// writer, the progress shown, the line naming a default store on its first use).
    fn open(&self, config: &Config) -> Result<crate::Client<crate::backend::AnyThread>>;
    /// The configured store, opened, and the `[status]` policy; the line naming a default store
    /// is held until the verb's first output, and not shown if the request is [`refused`].
    fn store(&self) -> Result<(crate::Client<crate::backend::AnyThread>, StatusPolicy)>;
    /// Takes back the line [`store`](Host::store) held, for a verb to show it itself.
    fn take_note(&self) -> Option<String>;
    /// The configuration: the file, the environment and the global flags, the git remote
    /// filling the gaps. A flag that cannot be one of its layers is a usage error.
    fn config(&self) -> Result<Config>;
}

/// Whether the request itself was refused (a usage or data error): the line naming the default
/// store is then not shown.
pub fn refused<T>(result: &Result<T>) -> bool {
    result
        .as_ref()
        .err()
        .is_some_and(|e| matches!(e.category(), crate::Category::Usage | crate::Category::Data))
}

/// What the binary does with a verb of the table, given its type.
pub trait Visit: Sized {
    /// What visiting gives (by default nothing, for a verb the visitor does not run).
    type Out: Default;
    /// Visits `V`, any verb of the table.
    fn visit<V: CliVerb + 'static>(self) -> Self::Out {
        Self::Out::default()
    }
    /// Visits `V`, a verb the library runs; by default as any verb.
    fn visit_library<V: Command + 'static>(self) -> Self::Out {
        self.visit::<V>()
    }
}

/// The answer of the verb named `name` on the JSON `args` with no store opened, for a verb that
/// opens none (`parse`, `schema`): the request read and checked as [`call`](super::call) reads
/// it, the answer the same JSON. `None` when the verb needs a store, or no verb has that name.
pub fn alone(name: &str, args: Value) -> Option<Result<Value>> {
    struct Alone(Value);
    impl Visit for Alone {
        type Out = Option<Result<Value>>;
        fn visit_library<V: Command + 'static>(self) -> Self::Out {
            if V::SPEC.opens_store {
                return None;
            }
            match super::request_of::<V>(self.0) {
                Ok(request) => Some(V::alone(&request)?.and_then(|a| super::answer_value::<V>(&a))),
                Err(e) => Some(Err(e)),
            }
        }
    }
    super::visit(name, Alone(args)).flatten()
}

/// Runs the verb named `name` on the JSON `args` as [`call`](super::call) does, and shows its
/// answer on `p` as the CLI shows it (the text MCP puts before the structured answer, with `p`
/// capturing it); the answer as JSON. `None` when the library does not run a verb of that name.
pub async fn shown<P: Printer + Sync>(
    ctx: &super::Context<'_>,
    name: &str,
    args: Value,
    p: &P,
) -> Option<Result<Value>> {
    struct Shown<'a, P>(&'a super::Context<'a>, Value, &'a P);
    type Ran<'a> = Pin<Box<dyn Future<Output = Result<Value>> + Send + 'a>>;
    impl<'a, P: Printer + Sync> Visit for Shown<'a, P> {
        type Out = Option<Ran<'a>>;
        fn visit_library<V: Command + 'static>(self) -> Self::Out {
            let Shown(ctx, args, p) = self;
            Some(Box::pin(async move {
                let request = super::request_of::<V>(args)?;
                let answer = super::run::<V>(ctx, request.clone()).await?;
                let value = super::answer_value::<V>(&answer)?;
                V::show(&request, answer, p);
                Ok(value)
            }))
        }
    }
    Some(super::visit(name, Shown(ctx, args, p))??.await)
}

/// `text` with every control character but line feed and tab, and every bidirectional control
/// or invisible character, as a space: a record's text (an issue writer's edit, a seed agent's
/// phase) may hold ESC, OSC or C1 controls, or U+202E to reorder what follows, and none may
/// reach a terminal or a model. (The CLI's colours are added after; JSON escapes.)
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_control =
        |c: char| (c.is_control() && c != '\n' && c != '\t') || crate::format::is_invisible(c);
    match text.chars().any(unsafe_control) {
        true => text
            .chars()
            .map(|c| if unsafe_control(c) { ' ' } else { c })
            .collect::<String>()
            .into(),
        false => text.into(),
    }
}

/// The CLI's subcommand of every verb, in the table's order, its flags the verb's.
pub fn commands() -> Vec<Subcommand> {
    struct Of;
    impl Visit for Of {
        type Out = Subcommand;
        fn visit<V: CliVerb + 'static>(self) -> Subcommand {
            subcommand::<V::Flags>(&V::SPEC)
        }
    }
    let table = super::table().into_iter();
    table.filter_map(|s| super::visit(s.name, Of)).collect()
}

/// A verb's subcommand: its name, its one line, its examples and its flags `F`.
pub fn subcommand<F: Args>(spec: &super::Spec) -> Subcommand {
    let about = match spec.about {
        "" => spec.title,
        about => about,
    };
    // After the flags: a request's own doc comment would otherwise be the verb's about.
    let command = F::augment_args(Subcommand::new(spec.name))
        .about(about)
        .long_about(None);
    let after = match (spec.after, spec.examples) {
        (after, "") => after.to_string(),
        ("", examples) => format!("Examples:\n{examples}"),
        (after, examples) => format!("{after}\n\nExamples:\n{examples}"),
    };
    match after.as_str() {
        "" => command,
        _ => command.after_help(after),
    }
}
