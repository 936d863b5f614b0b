//! The crate-wide error: every failure a verb can hit, grouped by who has to act on it.

use thiserror::Error;

use crate::format::{BuildError, ParseError, RenderError};
use crate::store::{BackendFailure, StoreError};

/// Who has to fix it, which is also what the CLI's exit code says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// The input data was bad (a flag value, a comment body, a JSON document).
    Data,
    /// The store could not be read or written.
    Io,
    /// The configuration (file, templates, environment) is wrong.
    Config,
    /// A temporary failure: try again later (the forge cannot be reached).
    TempFail,
}

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Data(String),
    /// Local files (the outbox) could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The store could not be read and nothing else is known.
    #[error("{0}")]
    Offline(String),
}

impl Error {
    pub fn category(&self) -> Category {
        match self {
            Error::Build(_) | Error::Parse(_) | Error::Data(_) => Category::Data,
            Error::Render(RenderError::Template { .. } | RenderError::NotReadable { .. }) => {
                Category::Config
            }
            Error::Render(_) => Category::Data,
            Error::Store(StoreError::Backend {
                kind: BackendFailure::Setup,
                ..
            }) => Category::Config,
            Error::Store(StoreError::Backend {
                kind: BackendFailure::Rejected,
                ..
            }) => Category::Data,
            Error::Store(_) => Category::Io,
            Error::Config(_) => Category::Config,
            Error::Offline(_) => Category::TempFail,
            Error::Io(_) => Category::Io,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
