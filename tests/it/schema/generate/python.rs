//! `python/forgestate/_verbs.py` from the [`Model`]: minijinja over `verbs.py.j2`.

use minijinja::{Environment, Value as Jinja};

use super::model::{Method, Model};

/// `text` wrapped at `width` columns after `indent` spaces and `lead`, each line so started.
pub fn wrap(text: &str, indent: usize, lead: &str, width: usize) -> Vec<String> {
    let pad = format!("{}{lead}", " ".repeat(indent));
    let mut lines = Vec::new();
    for para in text.split("\n\n") {
        if !lines.is_empty() {
            lines.push(pad.trim_end().to_string());
        }
        let mut line = pad.clone();
        for word in para.split_whitespace() {
            if line.len() > pad.len() && line.len() + 1 + word.len() > width {
                lines.push(std::mem::replace(&mut line, pad.clone()));
            }
            if line.len() > pad.len() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if line.len() > pad.len() {
            lines.push(line);
        }
    }
    lines
}

/// Text safe inside a `"""` docstring.
fn escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"")
}

fn docstring(text: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let text = escaped(if text.is_empty() {
        "(No description.)"
    } else {
        text
    });
    let mut lines = wrap(&text, indent, "", 96);
    if let Some(first) = lines.first_mut() {
        *first = format!("{pad}\"\"\"{}", first.trim_start());
    }
    let last = lines.pop().unwrap_or_default();
    let one = lines.is_empty() && last.len() + 3 <= 96;
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    match one {
        true => out.push_str(&format!("{last}\"\"\"")),
        false => out.push_str(&format!("{last}\n{pad}\"\"\"")),
    }
    out
}

fn comment(text: &str, indent: usize) -> String {
    wrap(text, indent, "#: ", 96)
        .into_iter()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

fn method_doc(m: &Method, indent: usize) -> String {
    let mut text = m.doc.clone();
    let params: Vec<_> = m.positional.iter().chain(&m.keyword).collect();
    let mut out = String::new();
    if !params.is_empty() {
        text.push_str("\n\nParameters:");
    }
    let pad = " ".repeat(indent);
    let body = docstring(&text, indent);
    let (head, tail) = body.rsplit_once("\"\"\"").unwrap_or((&body, ""));
    out.push_str(head.trim_end_matches([' ', '\n']));
    for p in params {
        let line = format!("``{}``: {}", p.name, escaped(&p.doc));
        let wrapped = wrap(&line, indent + 4, "", 96);
        out.push('\n');
        out.push_str(&format!("{pad}- {}", wrapped.join("\n").trim_start()));
    }
    out.push_str(&format!("\n{pad}\"\"\"{tail}"));
    out
}

/// The text of `_verbs.py` for `model`.
pub fn render(model: &mut Model) -> String {
    for m in &mut model.methods {
        m.docstring = method_doc(m, 8);
    }
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("docstring", |t: String, i: usize| docstring(&t, i));
    env.add_filter("comment", |t: String, i: usize| comment(&t, i));
    env.add_template("verbs.py", include_str!("verbs.py.j2"))
        .expect("the template parses");
    let tmpl = env.get_template("verbs.py").expect("added above");
    let text = tmpl
        .render(Jinja::from_serialize(model))
        .expect("the model renders");
    let mut out: String = text
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    while out.contains("\n\n\n\n") {
        out = out.replace("\n\n\n\n", "\n\n\n");
    }
    out.trim_end().to_string() + "\n"
}
