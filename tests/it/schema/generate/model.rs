//! The Python face as data, read from `forgestate schema`'s document: each verb's method (its
//! parameters, defaults and docs from the request schema) and one dataclass per answer and per
//! nested type of an answer.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// One parameter of a method: a field of the verb's request.
#[derive(Debug, Serialize)]
pub struct Param {
    /// The Python name (`from_` for `from`).
    pub name: String,
    /// The request field.
    pub field: String,
    /// The annotation.
    pub ann: String,
    /// The default as a Python literal (`None` when the field is required).
    pub default: Option<String>,
    /// The field's doc.
    pub doc: String,
}

/// One verb as a method.
#[derive(Debug, Serialize)]
pub struct Method {
    /// The Python name (`resume_map`, `import_`).
    pub name: String,
    /// The verb's name.
    pub verb: String,
    /// Its title.
    pub title: String,
    /// Parameters passed in order (or by name).
    pub positional: Vec<Param>,
    /// Parameters passed by name only.
    pub keyword: Vec<Param>,
    /// The answer's dataclass.
    pub answer: String,
    /// The verb's description.
    pub doc: String,
    /// The method's docstring, indented (filled by the renderer).
    pub docstring: String,
}

/// One field of a dataclass.
#[derive(Debug, Serialize)]
pub struct Field {
    /// The Python name.
    pub name: String,
    /// The JSON key.
    pub key: String,
    /// The annotation.
    pub ann: String,
    /// What follows `=` in the class body.
    pub default: String,
    /// The expression reading it from `doc`.
    pub convert: String,
    /// The field's doc.
    pub doc: String,
}

/// One dataclass: an answer or a type nested in one.
#[derive(Debug, Serialize)]
pub struct Class {
    /// Its name.
    pub name: String,
    /// Its doc.
    pub doc: String,
    /// Its fields.
    pub fields: Vec<Field>,
    /// Another answer class with the same schema, which this name stands for.
    pub alias_of: Option<String>,
}

/// The Python face of the table.
#[derive(Debug, Default, Serialize)]
pub struct Model {
    /// Every verb of the Python face, in the table's order.
    pub methods: Vec<Method>,
    /// The dataclasses, each after the ones it names.
    pub classes: Vec<Class>,
    /// Per verb of the Python face, its CLI flags and the parameter each is.
    pub flags: BTreeMap<String, BTreeMap<String, String>>,
    /// The verbs run as a process of their own (`forgestate --json VERB`): each field's flag.
    pub machine: BTreeMap<String, BTreeMap<String, String>>,
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// `name` as a Python identifier: `-` as `_`, a keyword with a trailing `_`.
pub fn ident(name: &str) -> String {
    let name = name.replace('-', "_");
    match KEYWORDS.contains(&name.as_str()) {
        true => format!("{name}_"),
        false => name,
    }
}

/// `resume-map` as `ResumeMap`.
pub fn camel(name: &str) -> String {
    name.split(['-', '_'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The strings of the array `schema[key]` (`required`, `positional`).
pub fn strings(schema: &Value, key: &str) -> Vec<String> {
    let items = schema.get(key).and_then(Value::as_array);
    let strs = items.into_iter().flatten().filter_map(Value::as_str);
    strs.map(str::to_string).collect()
}

fn text(schema: &Value, key: &str) -> String {
    schema
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A JSON value as a Python literal.
pub fn literal(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => value.to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(literal).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What a schema is, for Python.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Any,
    Str,
    Int,
    Float,
    Bool,
    Dict,
    List(Box<Shape>),
    Class(String),
    Optional(Box<Shape>),
}

impl Shape {
    fn ann(&self) -> String {
        match self {
            Shape::Any => "Any".into(),
            Shape::Str => "str".into(),
            Shape::Int => "int".into(),
            Shape::Float => "float".into(),
            Shape::Bool => "bool".into(),
            Shape::Dict => "Dict[str, Any]".into(),
            Shape::List(inner) => format!("List[{}]", inner.ann()),
            Shape::Class(name) => name.clone(),
            Shape::Optional(inner) if **inner == Shape::Any => "Any".into(),
            Shape::Optional(inner) => format!("Optional[{}]", inner.ann()),
        }
    }

    fn optional(self) -> Shape {
        match self {
            Shape::Optional(_) | Shape::Any => self,
            other => Shape::Optional(Box::new(other)),
        }
    }
}

/// The schemas of one document (`$defs` of the answer or request it belongs to).
struct Doc<'a> {
    defs: Option<&'a Map<String, Value>>,
}

impl Doc<'_> {
    fn resolve<'s>(&'s self, schema: &'s Value) -> (&'s Value, Option<String>) {
        let name = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"));
        match name.and_then(|n| self.defs?.get(n).map(|d| (d, n))) {
            Some((def, n)) => (def, Some(n.to_string())),
            None => (schema, None),
        }
    }
}

/// Every property an object of `schema` may have, over its `oneOf`/`anyOf`/`allOf` branches.
fn properties(schema: &Value) -> Map<String, Value> {
    let mut found = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        found.extend(props.clone());
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for (k, v) in properties(branch) {
                found.entry(k).or_insert(v);
            }
        }
    }
    found
}

fn branches(schema: &Value) -> Vec<&Value> {
    ["oneOf", "anyOf"]
        .iter()
        .flat_map(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .collect()
}

fn is_null(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::String("null".into()))
}

/// The classes found so far, by name, in the order each was finished.
#[derive(Default)]
struct Classes {
    done: Vec<Class>,
    started: Vec<String>,
}

impl Classes {
    fn shape(&mut self, schema: &Value, doc: &Doc<'_>) -> Shape {
        let (schema, name) = doc.resolve(schema);
        let alts = branches(schema);
        if !alts.is_empty() && alts.iter().any(|b| is_null(b)) {
            let rest: Vec<&Value> = alts.into_iter().filter(|b| !is_null(b)).collect();
            return match rest.as_slice() {
                [one] => self.shape(one, doc).optional(),
                _ => Shape::Any,
            };
        }
        if !alts.is_empty()
            && alts
                .iter()
                .all(|b| b.get("const").is_some() || b.get("enum").is_some())
        {
            return Shape::Str;
        }
        if !properties(schema).is_empty() {
            return match name {
                Some(name) => {
                    self.class(&name, schema, doc);
                    Shape::Class(name)
                }
                None => Shape::Dict,
            };
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let nullable = types.contains(&"null");
        let shape = match types.iter().find(|t| **t != "null").copied() {
            Some("string") => Shape::Str,
            Some("integer") => Shape::Int,
            Some("number") => Shape::Float,
            Some("boolean") => Shape::Bool,
            Some("object") => Shape::Dict,
            Some("array") => {
                let item = schema
                    .get("items")
                    .map_or(Shape::Any, |i| self.shape(i, doc));
                Shape::List(Box::new(item))
            }
            _ if schema.get("enum").is_some() => Shape::Str,
            _ => Shape::Any,
        };
        if nullable { shape.optional() } else { shape }
    }

    /// Adds the dataclass `name` for the object `schema` (once).
    fn class(&mut self, name: &str, schema: &Value, doc: &Doc<'_>) {
        if self.started.iter().any(|n| n == name) {
            return;
        }
        self.started.push(name.to_string());
        let mut fields = Vec::new();
        for (key, sub) in properties(schema) {
            let shape = self.shape(&sub, doc);
            fields.push(field(&key, &shape, text(&sub, "description")));
        }
        if !fields.iter().any(|f| f.name == "raw") {
            fields.push(Field {
                name: "raw".into(),
                key: String::new(),
                ann: "Dict[str, Any]".into(),
                default: "field(default_factory=dict, repr=False, compare=False)".into(),
                convert: "dict(doc)".into(),
                doc: "The whole JSON document, fields newer than this class included.".into(),
            });
        }
        self.done.push(Class {
            name: name.to_string(),
            doc: text(schema, "description"),
            fields,
            alias_of: None,
        });
    }
}

/// The dataclass field for the answer property `key` of `shape`.
fn field(key: &str, shape: &Shape, doc: String) -> Field {
    let get = format!("doc.get({})", Value::String(key.to_string()));
    let (default, convert) = match shape {
        Shape::Class(c) => ("None".to_string(), format!("_one({c}, {get})")),
        Shape::Optional(inner) => match &**inner {
            Shape::Class(c) => ("None".into(), format!("_one({c}, {get})")),
            Shape::List(item) => match &**item {
                Shape::Class(c) => ("None".into(), format!("_many({c}, {get}, None)")),
                _ => ("None".into(), get),
            },
            _ => ("None".into(), get),
        },
        Shape::List(item) => {
            let convert = match &**item {
                Shape::Class(c) => format!("_many({c}, {get}, [])"),
                _ => format!("{get} or []"),
            };
            ("field(default_factory=list)".into(), convert)
        }
        Shape::Dict => (
            "field(default_factory=dict)".into(),
            format!("{get} or {{}}"),
        ),
        Shape::Str => ("\"\"".into(), format!("{get} or \"\"")),
        Shape::Int => ("0".into(), format!("{get} or 0")),
        Shape::Float => ("0.0".into(), format!("{get} or 0.0")),
        Shape::Bool => ("False".into(), format!("{get} is True")),
        Shape::Any => ("None".into(), get),
    };
    let ann = match shape {
        Shape::Class(c) => format!("Optional[{c}]"),
        s => s.ann(),
    };
    Field {
        name: ident(key),
        key: key.to_string(),
        ann,
        default,
        convert,
        doc,
    }
}

/// The parameter for the request field `key`.
fn param(key: &str, sub: &Value, required: bool, classes: &mut Classes, doc: &Doc<'_>) -> Param {
    let (resolved, _) = doc.resolve(sub);
    let shape = match classes.shape(sub, doc) {
        // A request names no dataclass: an object is a mapping.
        Shape::Class(_) => Shape::Dict,
        s => s,
    };
    let default = match (required, sub.get("default").or(resolved.get("default"))) {
        (true, _) => None,
        (false, Some(value)) => Some(literal(value)),
        (false, None) => Some("None".into()),
    };
    let shape = match default.as_deref() {
        Some("None") => shape.optional(),
        _ => shape,
    };
    Param {
        name: ident(key),
        field: key.to_string(),
        ann: shape.ann(),
        default,
        doc: text(sub, "description"),
    }
}

impl Model {
    /// The Python face of `schema`, the document `forgestate schema` prints.
    pub fn new(schema: &Value) -> Model {
        let mut model = Model::default();
        let mut classes = Classes::default();
        let mut answers: Vec<(String, String)> = Vec::new();
        let verbs = schema
            .get("verbs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for verb in verbs {
            let faces = verb.get("faces").and_then(Value::as_array);
            if !faces.is_some_and(|f| f.iter().any(|f| f == "python")) {
                continue;
            }
            let name = text(verb, "name");
            let request = verb.get("request").cloned().unwrap_or_default();
            let answer = verb.get("answer").cloned().unwrap_or_default();
            let req_doc = Doc {
                defs: request.get("$defs").and_then(Value::as_object),
            };
            let required = strings(&request, "required");
            let positional = strings(verb, "positional");
            let props = properties(&request);
            let mut method = Method {
                name: ident(&name),
                verb: name.clone(),
                title: text(verb, "title"),
                positional: Vec::new(),
                keyword: Vec::new(),
                answer: String::new(),
                doc: text(verb, "description"),
                docstring: String::new(),
            };
            let count = positional.iter().filter(|k| props.contains_key(*k)).count();
            let in_order = positional.iter().filter_map(|k| Some((k, props.get(k)?)));
            let by_name = props.iter().filter(|(k, _)| !positional.contains(k));
            for (n, (key, sub)) in in_order.chain(by_name).enumerate() {
                let required = required.contains(key);
                let p = param(key, sub, required, &mut classes, &req_doc);
                match n < count {
                    true => method.positional.push(p),
                    false => method.keyword.push(p),
                }
            }
            let flags: BTreeMap<String, String> = verb
                .get("flags")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(field, flag)| Some((field.clone(), flag.as_str()?.to_string())))
                .collect();
            let by_flag = flags
                .iter()
                .filter(|(_, flag)| flag.starts_with("--"))
                .map(|(field, flag)| (flag.clone(), ident(field)))
                .collect();
            model.flags.insert(name.clone(), by_flag);
            if verb.get("runs").and_then(Value::as_str) == Some("machine") {
                model.machine.insert(name.clone(), flags);
            }
            // The answer: a class of its own, or the one an identical answer already has.
            let text_of = answer.to_string();
            let class = format!("{}Answer", camel(&name));
            match answers.iter().find(|(_, t)| *t == text_of) {
                Some((first, _)) => {
                    classes.done.push(Class {
                        name: class.clone(),
                        doc: String::new(),
                        fields: Vec::new(),
                        alias_of: Some(first.clone()),
                    });
                }
                None => {
                    let doc = Doc {
                        defs: answer.get("$defs").and_then(Value::as_object),
                    };
                    classes.class(&class, &answer, &doc);
                    answers.push((class.clone(), text_of));
                }
            }
            method.answer = class;
            model.methods.push(method);
        }
        model.classes = classes.done;
        model
    }
}
