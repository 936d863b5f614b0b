//! The check a spooled body passes before it is posted (the client hands in its out-gate):
//! refuse it, post it as it is, or post a redacted body instead.

/// Checks a spooled body before it is posted: `Err` says why it is not to be posted, `Ok(Some)`
/// is the body to post instead (the out-gate redacted it), `Ok(None)` posts it as it is.
#[derive(Clone)]
pub struct Validator(std::sync::Arc<ValidatorFn>);

type Verdict = std::result::Result<Option<String>, String>;
type ValidatorFn = dyn Fn(&str) -> Verdict + Send + Sync;

impl Validator {
    /// Wraps a check that only accepts or refuses; `Err` says why a body is not to be posted.
    pub fn new(
        check: impl Fn(&str) -> std::result::Result<(), String> + Send + Sync + 'static,
    ) -> Validator {
        Validator(std::sync::Arc::new(move |body| check(body).map(|()| None)))
    }

    /// Wraps a gate, which may also rewrite a body (`Ok(Some(body))`: post this instead). It
    /// must be deterministic: a flush recognises an earlier attempt by the body it posted.
    pub fn gate(gate: impl Fn(&str) -> Verdict + Send + Sync + 'static) -> Validator {
        Validator(std::sync::Arc::new(gate))
    }

    /// Runs the check.
    pub fn check(&self, body: &str) -> Verdict {
        (self.0)(body)
    }
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}
