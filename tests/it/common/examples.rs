//! Each verb's example request (its spec's `example`) as the command line spells it, read off the
//! table: a field is its flag (`--field-name`, or the one the spec names), a list a repeated
//! flag, an object its JSON text, a `*_secs`/`*_ms` duration with its unit, and a field (or, for
//! `*`, the whole request) the spec reads from `<FILE|->` goes on stdin.

use forgestate::verbs::Spec;
use serde_json::Value;

/// The example's JSON object.
pub fn example(spec: &Spec) -> serde_json::Map<String, Value> {
    match serde_json::from_str(spec.example) {
        Ok(Value::Object(map)) => map,
        other => panic!("{}: the example is not a JSON object: {other:?}", spec.name),
    }
}

/// `VERB --flag value…` for the example, and what goes on stdin.
pub fn cli_args(spec: &Spec) -> (Vec<String>, Option<String>) {
    let request = example(spec);
    let mut args = vec![spec.name.to_string()];
    let mut stdin = None;
    for (field, value) in &request {
        let named = spec
            .flags
            .iter()
            .find(|(f, _)| f == field || *f == "*")
            .map(|(_, flag)| *flag);
        if let Some(positional) = named.filter(|f| f.starts_with('<')) {
            assert_eq!(positional, "<FILE|->", "{}", spec.name);
            if stdin.is_none() {
                args.push("-".into());
            }
            stdin = Some(match (named, value) {
                (_, Value::String(text)) if spec.flags.iter().all(|(f, _)| *f != "*") => {
                    text.clone()
                }
                _ => Value::Object(request.clone()).to_string(),
            });
            continue;
        }
        let flag = format!(
            "--{}",
            named.map_or_else(|| field.replace('_', "-"), String::from)
        );
        let unit = |n: &Value| match field {
            f if f.ends_with("_secs") => format!("{n}s"),
            f if f.ends_with("_ms") => format!("{n}ms"),
            _ => n.to_string(),
        };
        match value {
            Value::Bool(true) => args.push(flag),
            Value::Bool(false) | Value::Null => {}
            Value::Array(items) => {
                for item in items {
                    args.push(flag.clone());
                    args.push(item.as_str().map_or_else(|| item.to_string(), String::from));
                }
            }
            Value::String(text) => args.extend([flag, text.clone()]),
            Value::Number(_) => args.extend([flag, unit(value)]),
            Value::Object(_) => args.extend([flag, value.to_string()]),
        }
    }
    (args, stdin)
}
