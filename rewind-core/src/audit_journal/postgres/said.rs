//! What the database said, in words, and the times a query may ask for.

use chrono::{DateTime, Utc};

/// What the database said, in words: tokio-postgres's own words for a refused statement are only
/// "db error".
pub(super) fn said(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// Why the pool gave no connection, in words.
pub(super) fn pool_said(e: deadpool_postgres::PoolError) -> String {
    match e {
        deadpool_postgres::PoolError::Backend(e) => said(&e),
        other => other.to_string(),
    }
}

/// The earliest time a query asks for: PostgreSQL's timestamps start in 4713 BC, chrono's far
/// earlier, and no record is older than the Unix epoch.
pub(super) fn clamped(since: DateTime<Utc>) -> DateTime<Utc> {
    since.max(DateTime::UNIX_EPOCH)
}
