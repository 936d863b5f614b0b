//! `--json=FIELDS` and `--jq EXPR`: which part of a JSON answer is printed, as gh's flags do.
//! `--json` alone prints the whole answer, unchanged. FIELDS keeps the named top-level fields,
//! in the order given (their values exactly as the answer has them); `--jq` filters the answer
//! (after FIELDS, when both are given) with jaq, printing each result on its own line, strings
//! raw and everything else as compact JSON.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::value::RawValue;

/// What the command line asked to print of a JSON answer.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Selection {
    /// `--json=a,b`: the top-level fields to keep.
    pub fields: Option<Vec<String>>,
    /// `--jq EXPR`.
    pub jq: Option<String>,
    /// The verb may change something (a record posted, the outbox flushed): a failing `--jq`
    /// must then not read as the command's failure, since its changes stand.
    pub writes: bool,
}

impl Selection {
    /// From `--json[=FIELDS]` (`Some("")` for `--json` alone) and `--jq`. Each field is kept
    /// once, in the order first given; a list that names no field (`--json=,`) is refused with
    /// the usage error's message, rather than read as `--json` or printed as `{}`.
    pub fn new(json: Option<&str>, jq: Option<&str>) -> Result<Selection, String> {
        let fields = match json.filter(|f| !f.is_empty()) {
            None => None,
            Some(f) => {
                let mut fields: Vec<String> = Vec::new();
                for s in f.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if !fields.iter().any(|k| k == s) {
                        fields.push(s.to_string());
                    }
                }
                if fields.is_empty() {
                    return Err(format!(
                        "--json={f} names no field; name the answer's top-level fields, \
                         comma-separated (--json=phase,data), or pass --json alone for the whole answer"
                    ));
                }
                Some(fields)
            }
        };
        Ok(Selection {
            fields,
            jq: jq.map(str::to_string),
            writes: false,
        })
    }

    fn is_all(&self) -> bool {
        self.fields.is_none() && self.jq.is_none()
    }
}

static SELECTION: OnceLock<Selection> = OnceLock::new();

/// Sets the selection once, at start-up.
pub fn set(selection: Selection) {
    let _ = SELECTION.set(selection);
}

/// Whether the selection is for a verb that may change something ([`Selection::writes`]).
pub fn writes() -> bool {
    SELECTION.get().is_some_and(|s| s.writes)
}

/// The fields asked for that `valid` lacks: the usage error naming the valid ones, or `Ok`.
pub fn check_fields(fields: &[String], valid: &[String]) -> Result<(), String> {
    let unknown: Vec<&String> = fields.iter().filter(|f| !valid.contains(f)).collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = unknown.iter().map(|f| format!("{f:?}")).collect();
    let plural = if names.len() > 1 { "s" } else { "" };
    Err(format!(
        "--json: unknown field{plural} {}; the answer's fields are: {}",
        names.join(", "),
        valid.join(", ")
    ))
}

/// What to print for the pretty JSON `text` of an answer: the text itself with no selection,
/// else the selected part. `Err` is the usage error (a field the answer lacks, an expression
/// jaq cannot parse or run).
pub fn apply(text: &str) -> Result<String, String> {
    let Some(selection) = SELECTION.get().filter(|s| !s.is_all()) else {
        return Ok(text.to_string());
    };
    let mut text = text.to_string();
    if let Some(fields) = &selection.fields {
        text = pick(&text, fields)?;
    }
    match &selection.jq {
        Some(expr) => jq(expr, &text),
        None => Ok(text),
    }
}

/// The object `text` with only `fields`, in that order; a document that is not an object
/// (`latest`'s `null`) is printed whole.
fn pick(text: &str, fields: &[String]) -> Result<String, String> {
    let Ok(top) = serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(text) else {
        return Ok(text.to_string());
    };
    let valid: Vec<String> = top.keys().cloned().collect();
    check_fields(fields, &valid)?;
    // A top-level value's raw text keeps the indentation it had at this depth.
    let entries: Vec<String> = fields
        .iter()
        .map(|f| {
            let key = serde_json::to_string(f).unwrap_or_default();
            format!("  {key}: {}", top[f].get())
        })
        .collect();
    if entries.is_empty() {
        return Ok("{}".to_string());
    }
    Ok(format!("{{\n{}\n}}", entries.join(",\n")))
}

/// jq's `@csv` and `@tsv`, which jaq's standard library lacks (it has `@sh`, `@base64`, `@json`,
/// `@text`, `@html` and `@uri`). As in jq: the input is an array; strings are quoted (`@csv`,
/// quotes doubled) or escaped (`@tsv`: backslash, tab, newline and carriage return), numbers
/// and booleans printed, `null` empty, anything else an error.
const FORMATS: &str = r#"
def @csv:
  if isarray then
    map(if isstring then "\"" + (split("\"") | join("\"\"")) + "\""
        elif . == null then ""
        elif isnumber or isboolean then tostring
        else error("@csv: \(type) (\(tojson)) cannot be a CSV cell; pick strings, numbers or booleans")
        end) | join(",")
  else error("@csv: the input must be an array, not \(type); try [.a, .b] | @csv") end;
def @tsv:
  if isarray then
    map(if isstring then split("\\") | join("\\\\") | split("\t") | join("\\t")
          | split("\n") | join("\\n") | split("\r") | join("\\r")
        elif . == null then ""
        elif isnumber or isboolean then tostring
        else error("@tsv: \(type) (\(tojson)) cannot be a TSV cell; pick strings, numbers or booleans")
        end) | join("\t")
  else error("@tsv: the input must be an array, not \(type); try [.a, .b] | @tsv") end;
"#;

/// Runs `expr` over the JSON `text` with jaq (jq's standard library included). A panic inside
/// jaq (`import "x" as $x; $x` unwraps a module nobody loaded) is caught and reported as the
/// expression's failure, its default "thread panicked" lines kept off stderr.
fn jq(expr: &str, text: &str) -> Result<String, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_jq(expr, text)));
    std::panic::set_hook(hook);
    ran.unwrap_or_else(|_| {
        Err(format!(
            "--jq {expr:?} is not an expression jaq can run (it failed inside jaq; \
             modules and `import` are not supported)"
        ))
    })
}

/// [`jq`]'s work. `halt` stops the output, as in jq; `halt_error` (or `halt(N)` for N other
/// than 0) is the expression's failure, never the process's exit code: jaq's `unwrap_valr`
/// would exit the process (with 5, say), outside the documented exit codes.
fn run_jq(expr: &str, text: &str) -> Result<String, String> {
    use jaq_core::load::{Arena, File, Loader};
    use jaq_core::{Compiler, Ctx, Vars, data};
    use jaq_json::Val;

    let input = jaq_json::read::parse_single(text.as_bytes())
        .map_err(|e| format!("--jq: the answer is not JSON jaq reads: {e}"))?;
    let formats = jaq_core::load::parse(FORMATS, |p| p.defs()).unwrap_or_default();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .chain(formats);
    // No `env`: the process environment holds the forge token (FORGESTATE_TOKEN) and maybe the
    // signing key, and an answer filter has no business reading it.
    let funs = jaq_core::funs()
        .chain(jaq_std::funs().filter(|f| f.0 != "env"))
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let program = File {
        code: expr,
        path: (),
    };
    let bad = |why: &str| format!("--jq {expr:?} is not a jq expression jaq can {why}");
    let modules = Loader::new(defs)
        .load(&arena, program)
        .map_err(|_| bad("parse"))?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|_| bad("compile (an unknown function or variable?)"))?;
    let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
    let mut lines = Vec::new();
    for value in filter.id.run((ctx, input)) {
        let value = match value {
            Ok(v) => Ok(v),
            Err(exn) => match exn.get_err() {
                Ok(e) => Err(e),
                Err(exn) => match exn.get_halt() {
                    Ok(0) => break,
                    Ok(code) => {
                        return Err(format!(
                            "--jq {expr:?} halted with code {code} (halt_error); \
                             forgestate's exit codes are its own"
                        ));
                    }
                    Err(_) => return Err(format!("--jq {expr:?} stopped inside jaq")),
                },
            },
        };
        match value {
            Ok(Val::TStr(s)) => lines.push(String::from_utf8_lossy(&s).into_owned()),
            Ok(v) => lines.push(v.to_string()),
            Err(e) => {
                // jaq's message quotes the value it failed on, which can be the whole answer.
                let mut why = e.to_string();
                if why.chars().count() > 300 {
                    why = why.chars().take(300).collect::<String>() + "…";
                }
                return Err(format!("--jq {expr:?} failed on the answer: {why}"));
            }
        }
    }
    Ok(lines.join("\n"))
}
