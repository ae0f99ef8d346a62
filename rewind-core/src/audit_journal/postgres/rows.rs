//! The journal's rows: a record as the row it is appended as, and the queries that read rows back.
//!
//! Every append first takes one transaction-scoped lock, so that rows commit in the order of their
//! `seq`: a reader that asks for the rows after the last `seq` it saw (the guards view) never skips
//! one that committed late. An append is one statement, one round trip; every line commits as the
//! database's `synchronous_commit` says, a guard's task lines too (the file writes those unsynced).

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;

use super::super::error::JournalError;
use super::super::record::JournalRecord;

/// The lock every append takes first ("append" in ASCII).
pub(super) const APPEND_LOCK: i64 = 0x6170_7065_6e64;

/// One record, as its row.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    at: DateTime<Utc>,
    kind: String,
    change_id: String,
    vm_id: String,
    vm_key: String,
    vm: String,
    line: String,
}

impl Row {
    /// The row with `line` for its text: the line as another journal wrote it.
    pub(crate) fn with_line(self, line: String) -> Row {
        Row { line, ..self }
    }

    /// The change id it records.
    pub(crate) fn change_id(&self) -> &str {
        &self.change_id
    }

    /// `record` as a row.
    pub(crate) fn of(record: &JournalRecord) -> Result<Row, JournalError> {
        let encode = |e: serde_json::Error| JournalError::Encode(e.to_string());
        let kind = serde_json::to_value(record.kind).map_err(encode)?;
        let mut addresses = record.vm.ip_addresses.clone();
        addresses.sort_unstable();
        Ok(Row {
            at: record.time,
            kind: kind.as_str().unwrap_or_default().to_owned(),
            change_id: record.change_id.trim().to_owned(),
            vm_id: record.vm.id.to_lowercase(),
            vm_key: format!(
                "{}\u{1f}{}\u{1f}{}",
                record.vm.id.to_lowercase(),
                record.vm.name.to_lowercase(),
                addresses.join(",")
            ),
            vm: serde_json::to_string(&record.vm).map_err(encode)?,
            line: serde_json::to_string(record).map_err(encode)?,
        })
    }
}

/// Appends `row` after the append lock, in one statement: in `client`'s transaction, or in a
/// transaction of its own (one round trip) outside one. Its `seq` is taken after the lock, so rows
/// commit in `seq` order.
pub(super) async fn insert(
    client: &impl GenericClient,
    row: &Row,
) -> Result<(), tokio_postgres::Error> {
    client
        .execute(
            "WITH locked AS (SELECT pg_advisory_xact_lock($8))
             INSERT INTO rewind_journal (at, kind, change_id, vm_id, vm_key, vm, line)
             SELECT $1::timestamptz, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text
             FROM locked",
            &[
                &row.at,
                &row.kind,
                &row.change_id,
                &row.vm_id,
                &row.vm_key,
                &row.vm,
                &row.line,
                &APPEND_LOCK,
            ],
        )
        .await?;
    Ok(())
}

/// The lines written at or after `since` (every line without it), in `seq` order.
pub(super) async fn since(
    client: &impl GenericClient,
    since: Option<DateTime<Utc>>,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let rows = match since {
        Some(since) => {
            client
                .query(
                    "SELECT line FROM rewind_journal WHERE at >= $1 ORDER BY seq",
                    &[&super::said::clamped(since)],
                )
                .await?
        }
        None => {
            client
                .query("SELECT line FROM rewind_journal ORDER BY seq", &[])
                .await?
        }
    };
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The lines of `change_id` written at or after `since`, in `seq` order.
pub(super) async fn of_change(
    client: &impl GenericClient,
    change_id: &str,
    since: DateTime<Utc>,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT line FROM rewind_journal WHERE change_id = $1 AND at >= $2 ORDER BY seq",
            &[&change_id, &super::said::clamped(since)],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The lines after `seq`, with theirs, in order.
pub(super) async fn after(
    client: &impl GenericClient,
    seq: i64,
) -> Result<Vec<(i64, String)>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT seq, line FROM rewind_journal WHERE seq > $1 ORDER BY seq",
            &[&seq],
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Each way a VM has been named (its identifier, name and addresses), with the newest time it was
/// named so, oldest first.
pub(super) async fn namings(
    client: &impl GenericClient,
) -> Result<Vec<(DateTime<Utc>, String)>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT at, vm FROM (
                 SELECT DISTINCT ON (vm_key) at, vm FROM (
                     SELECT vm_key, at, vm, seq FROM rewind_journal
                     UNION ALL SELECT vm_key, at, vm, 0 FROM rewind_namings
                 ) every ORDER BY vm_key, seq DESC
             ) named ORDER BY at",
            &[],
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
