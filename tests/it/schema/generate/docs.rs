//! The reference blocks of the docs from `forgestate schema`'s document: each verb's flags in
//! docs/cli.md, the MCP tools in docs/mcp.md and the Python API in docs/python.md, each written
//! between its markers by the status table's splicer.

use serde_json::Value;

use super::model::{Model, literal, strings};
use forgestate::report::dashboard::splice_between;

/// One generated block: the doc it lives in and the name in its markers.
pub struct Block {
    /// The doc, from the repository's root.
    pub path: &'static str,
    /// The name in its markers (`cli` in `<!-- forgestate:generated:cli:begin ... -->`).
    pub name: &'static str,
}

/// Every generated block.
pub const BLOCKS: [Block; 3] = [
    Block {
        path: "docs/cli.md",
        name: "cli",
    },
    Block {
        path: "docs/mcp.md",
        name: "mcp",
    },
    Block {
        path: "docs/python.md",
        name: "python",
    },
];

impl Block {
    fn begin(&self) -> String {
        format!("<!-- forgestate:generated:{}:begin", self.name)
    }

    fn end(&self) -> String {
        format!("<!-- forgestate:generated:{}:end -->", self.name)
    }

    /// `doc` with this block's `content` between its markers (appended when it has none).
    pub fn splice(&self, doc: &str, content: &str) -> String {
        let block = format!(
            "{} (generated from `forgestate schema` by `UPDATE_SNAPSHOTS=1 cargo test --locked`; \
             edit outside the markers) -->\n{}\n{}",
            self.begin(),
            content.trim_end(),
            self.end()
        );
        splice_between(doc, (&self.begin(), &self.end()), &block).unwrap_or_else(|| doc.to_string())
    }

    /// This block's content for the table `schema`.
    pub fn content(&self, schema: &Value, model: &Model) -> String {
        match self.name {
            "cli" => cli(schema),
            "mcp" => mcp(schema),
            _ => python(model),
        }
    }
}

fn verbs(schema: &Value) -> impl Iterator<Item = &Value> {
    schema
        .get("verbs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn on(verb: &Value, face: &str) -> bool {
    verb.get("faces")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|x| x == face))
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// One table cell: on one line, its `|` escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// What a field takes, in words: `TEXT`, `N`, `JSON`, a switch, or its values.
fn value_of(field: &Value, defs: Option<&Value>) -> String {
    let resolved = field
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|n| defs?.get(n))
        .unwrap_or(field);
    let consts: Vec<&str> = ["oneOf", "anyOf"]
        .iter()
        .flat_map(|k| {
            resolved
                .get(*k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(|b| b.get("const").and_then(Value::as_str))
        .collect();
    if !consts.is_empty() {
        return consts
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ");
    }
    let ty = match resolved.get("type") {
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        Some(t) => t.as_str(),
        None => None,
    };
    match ty {
        Some("string") => "text".into(),
        Some("integer") => "integer".into(),
        Some("number") => "number".into(),
        Some("boolean") => "switch".into(),
        Some("array") => "text, repeated".into(),
        _ => "JSON".into(),
    }
}

fn default_of(field: &Value) -> String {
    match field.get("default") {
        None | Some(Value::Null) => String::new(),
        Some(Value::Bool(false)) => String::new(),
        Some(v) => format!("`{}`", v),
    }
}

/// Each field of `verb`'s request: name, its CLI form, whether required, the field.
fn fields(verb: &Value) -> Vec<(String, String, bool, Value)> {
    let request = verb.get("request").cloned().unwrap_or_default();
    let required = strings(&request, "required");
    let props = request
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    props
        .into_iter()
        .map(|(name, field)| {
            let flag = verb
                .get("flags")
                .and_then(|f| f.get(&name))
                .and_then(Value::as_str)
                .map_or_else(|| format!("--{}", name.replace('_', "-")), str::to_string);
            let req = required.contains(&name);
            (name, flag, req, field)
        })
        .collect()
}

/// docs/cli.md: each verb's flags.
fn cli(schema: &Value) -> String {
    let mut out = String::new();
    for verb in verbs(schema).filter(|v| on(v, "cli")) {
        let name = str_of(verb, "name");
        out.push_str(&format!(
            "\n#### `forgestate {name}`\n\n{}.\n\n",
            str_of(verb, "title")
        ));
        let fields = fields(verb);
        if fields.is_empty() {
            out.push_str("No flags of its own.\n");
            continue;
        }
        let defs = verb.get("request").and_then(|r| r.get("$defs"));
        out.push_str("| Flag | Takes | Default | Meaning |\n|---|---|---|---|\n");
        for (_, flag, required, field) in fields {
            let flag = match required {
                true => format!("`{flag}` (required)"),
                false => format!("`{flag}`"),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                cell(&flag),
                cell(&value_of(&field, defs)),
                cell(&default_of(&field)),
                cell(str_of(&field, "description"))
            ));
        }
    }
    out
}

/// docs/mcp.md: the tools.
fn mcp(schema: &Value) -> String {
    let mut out = String::from(
        "| Tool | Arguments (* required) | Answers | Nature | What it does |\n\
         |---|---|---|---|---|\n",
    );
    for verb in verbs(schema).filter(|v| on(v, "mcp")) {
        let args: Vec<String> = fields(verb)
            .into_iter()
            .map(|(name, _, required, _)| match required {
                true => format!("`{name}`*"),
                false => format!("`{name}`"),
            })
            .collect();
        let nature: Vec<&str> = [
            ("read_only", "read-only"),
            ("destructive", "destructive"),
            ("idempotent", "idempotent"),
            ("open_world", "reaches the forge"),
        ]
        .into_iter()
        .filter(|(k, _)| verb.get(*k) == Some(&Value::Bool(true)))
        .map(|(_, word)| word)
        .collect();
        let answer = verb.get("answer").cloned().unwrap_or_default();
        let answers: Vec<String> = answer
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys())
            .map(|k| format!("`{k}`"))
            .collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            str_of(verb, "name"),
            cell(&args.join(", ")),
            cell(&answers.join(", ")),
            cell(&nature.join(", ")),
            cell(str_of(verb, "title"))
        ));
    }
    out
}

/// docs/python.md: each method of `Client` (and `AsyncClient`) and the dataclass it answers.
fn python(model: &Model) -> String {
    let mut out = String::new();
    for m in &model.methods {
        let mut params: Vec<String> = Vec::new();
        for p in &m.positional {
            params.push(match &p.default {
                Some(d) => format!("{}={d}", p.name),
                None => p.name.clone(),
            });
        }
        if !m.keyword.is_empty() {
            params.push("*".into());
        }
        for p in &m.keyword {
            params.push(match &p.default {
                Some(d) => format!("{}={d}", p.name),
                None => p.name.clone(),
            });
        }
        let named = |name: &str| model.classes.iter().find(|c| c.name == name);
        let answer = named(&m.answer)
            .and_then(|c| match &c.alias_of {
                Some(first) => named(first),
                None => Some(c),
            })
            .map(|c| {
                let fields: Vec<String> = c
                    .fields
                    .iter()
                    .filter(|f| f.name != "raw")
                    .map(|f| format!("`{}`", f.name))
                    .collect();
                fields.join(", ")
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "- `{}({})` → `{}`: {}. Answers {}.\n",
            m.name,
            params.join(", "),
            m.answer,
            m.title,
            answer
        ));
    }
    out
}

#[test]
fn a_literal_is_python() {
    assert_eq!(
        literal(&serde_json::json!({"a": [true, null]})),
        "{\"a\": [True, None]}"
    );
}
