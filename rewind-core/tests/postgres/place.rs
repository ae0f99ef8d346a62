//! A test configuration whose journal is in a database of the test kit's PostgreSQL server.

use rewind_core::Config;
use rewind_core::config::JournalDatabase;

/// `c` with its journal in the database at `url`.
pub fn in_database(url: &str) -> impl Fn(Config) -> Config + '_ {
    move |c| Config {
        journal_database: Some(JournalDatabase::parse(url).unwrap()),
        ..c
    }
}
