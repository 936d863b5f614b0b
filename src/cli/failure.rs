//! [`Failure`]: a command's failure, its exit code and its message already worded for the user;
//! every CLI verb returns one.

use forgestate::Error;

use crate::face::{ErrorBody, exit_code};

/// A failure with its exit code, already worded for the user.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
    /// Why a comment is not a record (`parse`): the `reason` of the error document.
    pub(crate) reason: Option<String>,
}

impl Failure {
    /// A failure with exit code `code`.
    pub(crate) fn new(code: u8, message: String) -> Failure {
        Failure {
            code,
            message,
            reason: None,
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        // A body that is not a record says why in `reason`, as `call` and MCP say it.
        if let Error::Parse(_) = e {
            let body = ErrorBody::of(&e);
            return Failure {
                code: body.code,
                message: body.message,
                reason: body.reason,
            };
        }
        Failure::new(exit_code(&e), e.to_string())
    }
}
