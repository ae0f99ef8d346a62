//! `rewind journal archive` on a journal in PostgreSQL: the one statement that deletes its rows.
//!
//! In one transaction, after the append lock (so no row commits meanwhile): the rows written
//! before the cut whose change has no row after it (a change's rows stay together) are appended
//! to the archive file and synced, each way they named a VM is kept in `rewind_namings`, and they
//! are deleted. When the commit fails, the archive holds lines the database still holds too: the
//! next archive appends them again, and `rewind journal import` skips lines it has.

use std::io::Write;
use std::path::Path;

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;

/// What was moved: lines, their bytes, the lines left, the oldest left.
pub(crate) struct Moved {
    pub(crate) lines: u64,
    pub(crate) bytes: u64,
    pub(crate) kept: u64,
    pub(crate) oldest_kept: Option<DateTime<Utc>>,
}

/// Moves the whole changes written before `before` to the end of `archive`.
pub(super) async fn archive(
    client: &mut deadpool_postgres::Object,
    archive: &Path,
    before: DateTime<Utc>,
) -> Result<Moved, String> {
    let e = |e: tokio_postgres::Error| super::said::said(&e);
    let tx = client.transaction().await.map_err(e)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&super::rows::APPEND_LOCK],
    )
    .await
    .map_err(e)?;
    let rows = tx
        .query(
            "SELECT seq, line FROM rewind_journal j WHERE at < $1 AND NOT EXISTS (
                 SELECT 1 FROM rewind_journal k WHERE k.change_id = j.change_id AND k.at >= $1
             ) ORDER BY seq",
            &[&before],
        )
        .await
        .map_err(e)?;
    let seqs: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    let mut bytes = 0u64;
    if !seqs.is_empty() {
        let lines: Vec<String> = rows.iter().map(|r| r.get(1)).collect();
        bytes = append_lines(archive, &lines)?;
        keep_namings(&tx, &seqs).await.map_err(e)?;
        tx.execute("DELETE FROM rewind_journal WHERE seq = ANY($1)", &[&seqs])
            .await
            .map_err(e)?;
    }
    let left = tx
        .query_one("SELECT count(*), min(at) FROM rewind_journal", &[])
        .await
        .map_err(e)?;
    tx.commit().await.map_err(e)?;
    Ok(Moved {
        lines: seqs.len() as u64,
        bytes,
        kept: left.get::<_, i64>(0) as u64,
        oldest_kept: left.get(1),
    })
}

/// Keeps each naming of a VM the rows `seqs` hold.
async fn keep_namings(tx: &impl GenericClient, seqs: &[i64]) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "INSERT INTO rewind_namings (vm_key, at, vm)
         SELECT DISTINCT ON (vm_key) vm_key, at, vm FROM rewind_journal
         WHERE seq = ANY($1) ORDER BY vm_key, seq DESC
         ON CONFLICT (vm_key) DO NOTHING",
        &[&seqs],
    )
    .await?;
    Ok(())
}

/// Appends `lines` to `archive` (made 0600 when missing), synced; the bytes written.
fn append_lines(archive: &Path, lines: &[String]) -> Result<u64, String> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    let mut file = crate::local_state::open_private(archive, &mut options, true)
        .map_err(|e| format!("cannot write the archive {}: {e}", archive.display()))?;
    let mut text = String::new();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .and_then(|_| file.sync_all())
        .map_err(|e| format!("cannot write the archive {}: {e}", archive.display()))?;
    Ok(text.len() as u64)
}
