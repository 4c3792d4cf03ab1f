//! The store's error type. Input and not-found errors are the caller's to fix and name the
//! field at fault; the rest are the environment's (disk, database, configuration file).

use engram_core::InputError;
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request was refused as given; nothing was written.
    #[error(transparent)]
    Input(#[from] InputError),
    /// An id that names no memory (or none in the allowed tiers).
    #[error("invalid `{field}`: no memory {reference}")]
    NotFound {
        field: &'static str,
        reference: String,
    },
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
    /// A PostgreSQL statement failed (the server's message; never the connection's password).
    #[cfg(feature = "postgres")]
    #[error("database error: {}", postgres_message(.0))]
    Postgres(#[from] postgres::Error),
    /// The database server cannot be reached or the connection was lost; `target` names
    /// the host, port and database (never the password).
    #[error("cannot reach the database at {target}: {message}")]
    Unavailable { target: String, message: String },
    /// A job that one process of many on a shared database runs at a time
    /// ([`crate::storage::Job`]) is running in another one; nothing was done.
    #[error(
        "{job} is running in another engram process on {target}; nothing was done, try again when it has finished"
    )]
    Busy { job: &'static str, target: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },
    /// The approximate vector index failed (it is a cache: the caller can rebuild it).
    #[error("{0}")]
    Index(String),
    #[error(
        "{} has schema version {found}, newer than this engram understands ({supported}); upgrade engram",
        path.display()
    )]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
}

/// The server's own message and SQLSTATE for a statement that failed (the driver's
/// `Display` says only "db error"), else the driver's text.
#[cfg(feature = "postgres")]
fn postgres_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

impl Error {
    /// Whether the caller can fix this by changing the request (bad input, unknown id).
    pub fn is_caller_error(&self) -> bool {
        matches!(self, Error::Input(_) | Error::NotFound { .. })
    }

    /// The field at fault, for caller errors.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Error::Input(e) => Some(e.field),
            Error::NotFound { field, .. } => Some(field),
            _ => None,
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn not_found(field: &'static str, reference: impl std::fmt::Display) -> Self {
        Error::NotFound {
            field,
            reference: reference.to_string(),
        }
    }
}
