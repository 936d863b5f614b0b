//! [`Failure`]: a command's failure, its exit code and its message already worded for the user;
//! every CLI verb returns one.

use forgestate::Error;

use super::input::InputError;
use crate::face::{EX_DATAERR, EX_IOERR, EX_USAGE, exit_code};

/// A failure with its exit code, already worded for the user.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure {
            code: exit_code(&e),
            message: e.to_string(),
        }
    }
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Self {
        match e {
            InputError::Usage(message) => Failure {
                code: EX_USAGE,
                message,
            },
            InputError::Data(message) => Failure {
                code: EX_DATAERR,
                message,
            },
            InputError::Io(message) => Failure {
                code: EX_IOERR,
                message,
            },
        }
    }
}
