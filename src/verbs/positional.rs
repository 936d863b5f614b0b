//! The order a program passes a verb's arguments in without naming them (the Python package's
//! positional parameters), where it is more than the required fields.

/// Per verb, its leading arguments in order; a verb not listed takes its required fields.
const POSITIONAL: &[(&str, &[&str])] = &[
    ("checkpoint", &["agent", "session", "phase", "data"]),
    ("health", &["agent", "session", "metrics"]),
    ("latest", &["agent", "session", "kind"]),
    ("list", &["agent", "session", "kind", "since", "limit"]),
    ("status", &["agent", "session"]),
    ("history", &["session", "agent"]),
    ("resume-map", &["agent"]),
];

/// The arguments of `verb` a program may pass in order: its listed ones, else the `required`
/// fields of its request schema, in the request's order.
pub fn positional(verb: &str, request: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    if let Some((_, names)) = POSITIONAL.iter().find(|(name, _)| *name == verb) {
        return names.iter().map(|n| n.to_string()).collect();
    }
    request
        .get("required")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default()
}
