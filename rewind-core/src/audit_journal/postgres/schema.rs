//! The journal's tables, made and migrated when a process first uses the database, in one
//! transaction under a lock of its own so that replicas starting at once do it once. A row of
//! `rewind_schema` says each version applied; a database at a version newer than this build's is
//! refused rather than written in a form it does not know.
//!
//! `rewind_journal` holds one row per journal line: the line itself (the JSON-lines record, the
//! journal's exchange format) and the columns its reads select by. Its rows are never updated (a
//! trigger refuses it) and only `rewind journal archive` deletes them, keeping in `rewind_namings`
//! each way a VM it moved out was named (two VMs answering to one name stay ambiguous whatever the
//! age of their records). `rewind_leases` holds the
//! locks that replicas share (a change being guarded, a VPG's insert, the watcher), each a lease its
//! holder renews. `rewind_kept` holds values written once and read by every replica (a recovery
//! plan, the key of the digests of arguments); `rewind_log` the lines of the logs other than the
//! journal that replicas share (the held calls), appended under a lock of the log.

use deadpool_postgres::Client;

/// The version this build writes.
pub(super) const VERSION: i32 = 2;

/// The lock the migration takes (an arbitrary constant: "rewind" in ASCII).
const MIGRATION_LOCK: i64 = 0x7265_7769_6e64;

/// Each version's statements, in order: version `i + 1` is `STEPS[i]`.
const STEPS: &[&str] = &[
    r#"
CREATE TABLE rewind_journal (
    seq bigserial PRIMARY KEY,
    at timestamptz NOT NULL,
    kind text NOT NULL,
    change_id text NOT NULL,
    vm_id text NOT NULL,
    vm_key text NOT NULL,
    vm text NOT NULL,
    line text NOT NULL
);
CREATE INDEX rewind_journal_change ON rewind_journal (change_id, seq);
CREATE INDEX rewind_journal_at ON rewind_journal (at);
CREATE INDEX rewind_journal_vm_key ON rewind_journal (vm_key, seq);
CREATE FUNCTION rewind_journal_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the rewind journal''s rows are never updated';
END $$;
CREATE TRIGGER rewind_journal_no_update BEFORE UPDATE ON rewind_journal
    FOR EACH ROW EXECUTE FUNCTION rewind_journal_refuse_update();
CREATE TABLE rewind_namings (
    vm_key text PRIMARY KEY,
    at timestamptz NOT NULL,
    vm text NOT NULL
);
CREATE TABLE rewind_leases (
    name text PRIMARY KEY,
    holder text NOT NULL,
    until timestamptz NOT NULL
);
"#,
    r#"
CREATE TABLE rewind_kept (
    kind text NOT NULL,
    name text NOT NULL,
    value text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, name)
);
CREATE TABLE rewind_log (
    seq bigserial PRIMARY KEY,
    log text NOT NULL,
    line text NOT NULL,
    at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rewind_log_log ON rewind_log (log, seq);
"#,
];

/// Brings the database's schema to [`VERSION`].
pub(super) async fn migrate(client: &mut Client) -> Result<(), String> {
    let tx = client
        .transaction()
        .await
        .map_err(|e| super::said::said(&e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| super::said::said(&e))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS rewind_schema (
            version integer PRIMARY KEY,
            applied timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await
    .map_err(|e| super::said::said(&e))?;
    let row = tx
        .query_one("SELECT coalesce(max(version), 0) FROM rewind_schema", &[])
        .await
        .map_err(|e| super::said::said(&e))?;
    let at: i32 = row.get(0);
    if at > VERSION {
        return Err(format!(
            "its schema is version {at}, newer than this rewind's ({VERSION}): upgrade rewind on this machine"
        ));
    }
    for (i, step) in STEPS.iter().enumerate().skip(at as usize) {
        let version = i as i32 + 1;
        tx.batch_execute(step)
            .await
            .map_err(|e| format!("making schema version {version}: {e}"))?;
        tx.execute(
            "INSERT INTO rewind_schema (version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(|e| super::said::said(&e))?;
    }
    tx.commit().await.map_err(|e| super::said::said(&e))
}
