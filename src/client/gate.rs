//! The out-gate on the client: [`crate::format::outbound`] over this client's redactor and
//! renderer, for any body about to leave the machine (an import, another thread's records), and
//! handed to the durability layer as its validator, so a flushed body passes the same checks as
//! a saved one.

use super::Client;
use crate::durable::Validator;
use crate::error::{Error, Result};
use crate::store::Thread;

impl<T: Thread> Client<T> {
    /// Hands the durability layer the out-gate over this client's redactor and renderer, so a
    /// flushed body passes the same checks as a saved one (see [`Client::outbound`]).
    pub(super) fn regate(mut self) -> Client<T> {
        let (redactor, renderer) = (self.redactor.clone(), self.renderer.clone());
        let gate = Validator::gate(move |body| {
            match crate::format::outbound(body, &redactor, &renderer) {
                Ok(std::borrow::Cow::Borrowed(_)) => Ok(None),
                Ok(std::borrow::Cow::Owned(clean)) => Ok(Some(clean)),
                Err(e) => Err(format!("{e}; it was never posted")),
            }
        });
        self.store = self.store.with_validator(gate);
        self
    }

    /// The out-gate: what `body` (a rendered record from anywhere: an outbox, an export, another
    /// thread) must become before it leaves the machine through this client. It must parse as a
    /// valid record; every secret this client's redactor finds is replaced (the body rendered
    /// again, its `Redacted:` count raised); a clean body comes back unchanged. Refused (a data
    /// error) when it is not a record or a header value holds a secret.
    pub fn outbound(&self, body: &str) -> Result<String> {
        crate::format::outbound(body, &self.redactor, &self.renderer)
            .map(std::borrow::Cow::into_owned)
            .map_err(|e| Error::data("the record", format!("{e}; it was not posted")))
    }
}
