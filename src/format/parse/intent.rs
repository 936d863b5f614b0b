//! The intent's data: a `json-intent` block after the record's data, which seed readers (who
//! look for a `json` fence only) never see.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;

use super::ParseError;

/// The data of an intent: the first `json-intent` block after the record's data, or `null`.
/// Seed readers look for a `json` fence only, so they never see it.
pub(super) fn intent_data(body: &str, after: usize) -> Result<Value, ParseError> {
    let rest = &body[after..];
    let mut content: Option<(usize, String)> = None;
    for (event, range) in Parser::new_ext(rest, Options::empty()).into_offset_iter() {
        match (&mut content, event) {
            (None, Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))) => {
                let lang = info.split_whitespace().next().unwrap_or("");
                if lang.eq_ignore_ascii_case("json-intent") {
                    content = Some((after + range.start, String::new()));
                }
            }
            (Some((_, text)), Event::Text(t)) => text.push_str(&t),
            (Some(_), Event::End(TagEnd::CodeBlock)) => break,
            _ => {}
        }
    }
    let Some((start, text)) = content else {
        return Ok(Value::Null);
    };
    serde_json::from_str(&text).map_err(|e| ParseError::BadJson {
        line: body[..start].matches('\n').count() + 1 + e.line(),
        column: e.column(),
        message: format!("in the intent's data: {e}"),
    })
}
