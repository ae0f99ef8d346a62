//! What else replicas share: values kept once (`rewind_kept`), and logs of lines appended under a
//! lock of their own (`rewind_log`), such as the held calls.

use deadpool_postgres::GenericClient;

use super::said::said;

/// Keeps `value` as `kind`/`name` unless a value is kept there already; the value kept.
pub(super) async fn keep_once(
    client: &impl GenericClient,
    kind: &str,
    name: &str,
    value: &str,
) -> Result<String, String> {
    client
        .execute(
            "INSERT INTO rewind_kept (kind, name, value) VALUES ($1, $2, $3)
             ON CONFLICT (kind, name) DO NOTHING",
            &[&kind, &name, &value],
        )
        .await
        .map_err(|e| said(&e))?;
    let row = client
        .query_one(
            "SELECT value FROM rewind_kept WHERE kind = $1 AND name = $2",
            &[&kind, &name],
        )
        .await
        .map_err(|e| said(&e))?;
    Ok(row.get(0))
}

/// The value kept as `kind`/`name`, if any.
pub(super) async fn kept(
    client: &impl GenericClient,
    kind: &str,
    name: &str,
) -> Result<Option<String>, String> {
    let row = client
        .query_opt(
            "SELECT value FROM rewind_kept WHERE kind = $1 AND name = $2",
            &[&kind, &name],
        )
        .await
        .map_err(|e| said(&e))?;
    Ok(row.map(|r| r.get(0)))
}

/// The lines of `log`, in order.
pub(super) async fn lines(client: &impl GenericClient, log: &str) -> Result<Vec<String>, String> {
    let rows = client
        .query(
            "SELECT line FROM rewind_log WHERE log = $1 ORDER BY seq",
            &[&log],
        )
        .await
        .map_err(|e| said(&e))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The transaction lock of `log`.
pub(super) fn log_lock(log: &str) -> i64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("log\0{log}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// Appends `lines` to `log`.
pub(super) async fn append(
    client: &impl GenericClient,
    log: &str,
    lines: &[String],
) -> Result<(), String> {
    for line in lines {
        client
            .execute(
                "INSERT INTO rewind_log (log, line) VALUES ($1, $2)",
                &[&log, line],
            )
            .await
            .map_err(|e| said(&e))?;
    }
    Ok(())
}
