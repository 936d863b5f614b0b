//! The crate-wide error: every failure a verb can hit, grouped by who has to act on it.
//!
//! Variants keep their sources (the `io::Error` behind a file failure, the store's typed error),
//! and [`Error::category`] says who must act, which is also the CLI's exit code.

use std::path::PathBuf;

use thiserror::Error;

use crate::format::{BuildError, ParseError, RenderError};
use crate::store::{BackendFailure, StoreError};

/// Who has to fix it, which is also what the CLI's exit code says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Category {
    /// The input data was bad (a flag value, a comment body, a JSON document): exit 65.
    Data,
    /// A local file or directory could not be read or written: exit 74.
    Io,
    /// The configuration (file, templates, environment, token) is wrong: exit 78.
    Config,
    /// Temporarily unavailable (the forge cannot be reached); try again later: exit 75.
    TempFail,
    /// A request was malformed (an argument that is not a valid glob, time or choice): exit 64.
    Usage,
    /// A compare-and-set write was refused: the session moved on since the record the writer
    /// named (`--if-latest`); nothing was posted: exit 73.
    Conflict,
}

impl Category {
    /// The stable lower-case name used in `--json` error documents.
    pub fn name(self) -> &'static str {
        match self {
            Category::Data => "data",
            Category::Io => "io",
            Category::Config => "config",
            Category::TempFail => "tempfail",
            Category::Usage => "usage",
            Category::Conflict => "conflict",
        }
    }
}

/// Everything that can go wrong in a verb.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A record could not be built from its parts (a bad agent, session or phase name).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A record could not be rendered (a bad template, an oversized body).
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A body is not a record.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The store failed; its error says which and who must act.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A setting is wrong or missing. `setting` names it (a key, a flag, a variable).
    #[error("{message}")]
    Config {
        /// The setting at fault, when one is.
        setting: Option<String>,
        /// What is wrong and what to do.
        message: String,
    },
    /// Input data was refused. `source_name` says where it came from (a flag, a file).
    #[error("{source_name}: {reason}")]
    Data {
        /// Where the data came from (`--data`, a file path, stdin).
        source_name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A local file or directory could not be read or written.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done ("cannot write the outbox entry").
        action: String,
        /// The file or directory.
        path: PathBuf,
        /// The underlying failure.
        #[source]
        source: std::io::Error,
    },
    /// A request argument holds bad data (`data must be a JSON object`); the message names the
    /// argument as the request does.
    #[error("{message}")]
    Invalid {
        /// What is wrong with the value, and what to give instead.
        message: String,
    },
    /// A file a request names cannot be read as one (a FIFO, a device, a directory); the
    /// message names the argument and the path.
    #[error("{message}")]
    NotAFile {
        /// What the path is, and what to point the argument at instead.
        message: String,
    },
    /// A request was malformed: an argument that is not a valid glob, time or choice. The
    /// message names the argument as the request does (`agent`); a face may add its own name.
    #[error("{message}")]
    Usage {
        /// What is wrong, and how to write it.
        message: String,
    },
    /// A compare-and-set write was refused: the newest record of the session is not the one the
    /// writer named. Nothing was posted; the message names the newer record and its time.
    #[error("{message}")]
    Conflict {
        /// What is newer, and what to do.
        message: String,
    },
    /// This client's writer no longer owns the session: another writer took it over
    /// (`resume --take-over`). Nothing was posted; the message starts with `fenced:` and names
    /// the takeover (who, when, from which record). Exit 73, as a conflict.
    #[error("{message}")]
    Fenced {
        /// The takeover, and what to do.
        message: String,
    },
    /// The forge is temporarily unavailable and nothing else could answer; try again later.
    #[error("{message}")]
    Unavailable {
        /// What could not be done, and what to try.
        message: String,
    },
    /// A record was stored nowhere: it could not be posted and not spooled either.
    #[error("{message}")]
    NotStored {
        /// Why, naming both failures.
        message: String,
        /// What stopped it from being spooled.
        #[source]
        source: Option<std::io::Error>,
    },
}

impl Error {
    /// Who must act on this error.
    pub fn category(&self) -> Category {
        match self {
            Error::Build(_) | Error::Parse(_) | Error::Data { .. } => Category::Data,
            Error::Render(RenderError::Template { .. } | RenderError::NotReadable { .. }) => {
                Category::Config
            }
            Error::Render(_) => Category::Data,
            Error::Store(StoreError::Backend { kind, .. }) => match kind {
                BackendFailure::Setup => Category::Config,
                BackendFailure::Rejected => Category::Data,
                BackendFailure::Unavailable => Category::TempFail,
            },
            Error::Store(_) => Category::Io,
            Error::Config { .. } => Category::Config,
            Error::Unavailable { .. } => Category::TempFail,
            Error::Usage { .. } => Category::Usage,
            Error::Conflict { .. } | Error::Fenced { .. } => Category::Conflict,
            Error::Invalid { .. } => Category::Data,
            Error::NotAFile { .. } => Category::Io,
            Error::Io { .. } | Error::NotStored { .. } => Category::Io,
        }
    }

    /// Whether waiting and trying again may fix this (the forge is down, a disk was full), as
    /// opposed to a setting or the data someone has to fix first.
    pub fn retry_may_fix(&self) -> bool {
        matches!(self.category(), Category::TempFail | Category::Io)
    }

    /// A configuration error with only a message.
    pub fn config(message: impl Into<String>) -> Error {
        Error::Config {
            setting: None,
            message: message.into(),
        }
    }

    /// A configuration error about one named setting.
    pub fn setting(setting: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Config {
            setting: Some(setting.into()),
            message: message.into(),
        }
    }

    /// Refused input data from `source_name`.
    pub fn data(source_name: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Data {
            source_name: source_name.into(),
            reason: reason.into(),
        }
    }

    /// A local IO failure on `path` while doing `action`.
    pub fn io(
        action: impl Into<String>,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Error {
        Error::Io {
            action: action.into(),
            path: path.into(),
            source,
        }
    }

    /// A request argument holding bad data.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::Invalid {
            message: message.into(),
        }
    }

    /// A malformed request.
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage {
            message: message.into(),
        }
    }

    /// Temporarily unavailable.
    pub fn unavailable(message: impl Into<String>) -> Error {
        Error::Unavailable {
            message: message.into(),
        }
    }
}

/// `Result` with this crate's [`Error`](enum@Error).
pub type Result<T, E = Error> = std::result::Result<T, E>;
