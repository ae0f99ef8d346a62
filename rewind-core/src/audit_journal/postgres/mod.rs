//! The journal in PostgreSQL: what a team server's replicas share.
//!
//! One row per journal line (`rows`), the schema made and migrated at first use (`schema`), the
//! leases replicas lock with (`lease`), the connection (`connect`) and the thread that runs every
//! query (`bridge`). Lines are kept in the JSON-lines form the file holds, so the facade folds and
//! filters them the same way; this store only selects and appends. A query that fails says the
//! store's host and database and why, never a password.

mod archive;
mod bridge;
mod connect;
mod kept;
mod lease;
mod rows;
mod said;
mod schema;

pub(crate) use archive::Moved;
pub(crate) use lease::Standing;
pub(crate) use rows::Row;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use tokio::sync::OnceCell;

use super::error::JournalError;
use crate::config::JournalDatabase;
use said::{pool_said, said};

/// A journal kept in PostgreSQL.
#[derive(Debug)]
pub(crate) struct PgStore {
    place: String,
    pool: Pool,
    bridge: bridge::Bridge,
    migrated: Arc<OnceCell<()>>,
    holder: String,
    held: Arc<lease::Held>,
}

/// An answer from the database, or why there is none, in words.
type Answer<T> = Result<T, String>;

impl PgStore {
    /// The store of `database`; nothing is sent until it is first used.
    pub(crate) fn new(database: &JournalDatabase) -> Result<PgStore, JournalError> {
        let place = database.describe();
        let failed = |problem: String| JournalError::Store {
            store: place.clone(),
            problem,
        };
        let pool = connect::pool(database).map_err(failed)?;
        let bridge = bridge::Bridge::start().map_err(|e| failed(e.to_string()))?;
        let held: Arc<lease::Held> = Default::default();
        let holder = format!(
            "{}:{}:{}",
            hostname(),
            std::process::id(),
            hex::encode(rand::random::<[u8; 6]>())
        );
        bridge.spawn(lease::renew(
            pool.clone(),
            Arc::downgrade(&held),
            holder.clone(),
            place.clone(),
        ));
        Ok(PgStore {
            place,
            pool,
            bridge,
            migrated: Default::default(),
            holder,
            held,
        })
    }

    /// The host, port and database.
    pub(crate) fn place(&self) -> &str {
        &self.place
    }

    fn failed(&self, problem: String) -> JournalError {
        JournalError::Store {
            store: self.place.clone(),
            problem,
        }
    }

    /// A connection, the schema brought up to date on the first.
    async fn client(pool: Pool, migrated: Arc<OnceCell<()>>) -> Answer<deadpool_postgres::Object> {
        let mut client = pool.get().await.map_err(pool_said)?;
        migrated
            .get_or_try_init(|| schema::migrate(&mut client))
            .await?;
        Ok(client)
    }

    /// `work` with a connection, the schema brought up to date first: what the database's
    /// runtime runs for [`PgStore::block`] and [`PgStore::run`].
    fn with_client<T, F, Fut>(
        &self,
        work: F,
    ) -> impl std::future::Future<Output = Answer<T>> + use<T, F, Fut>
    where
        F: FnOnce(deadpool_postgres::Object) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Answer<T>> + Send,
    {
        let (pool, migrated) = (self.pool.clone(), self.migrated.clone());
        async move { work(Self::client(pool, migrated).await?).await }
    }

    /// The answer of a call that began at `began` (`None`: the runtime is gone), counted.
    fn answered<T>(&self, began: Instant, answer: Option<Answer<T>>) -> Result<T, JournalError> {
        let answer = answer.unwrap_or_else(|| Err("the process is ending".to_owned()));
        crate::metrics::metrics().store_call(began.elapsed(), answer.is_err());
        answer.map_err(|p| self.failed(p))
    }

    /// Runs `work` with a connection on the database's runtime, waiting for it here.
    fn block<T, F, Fut>(&self, work: F) -> Result<T, JournalError>
    where
        T: Send + 'static,
        F: FnOnce(deadpool_postgres::Object) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Answer<T>> + Send + 'static,
    {
        let began = Instant::now();
        let answer = self.bridge.block(self.with_client(work));
        self.answered(began, answer)
    }

    /// [`PgStore::block`] for async callers.
    async fn run<T, F, Fut>(&self, work: F) -> Result<T, JournalError>
    where
        T: Send + 'static,
        F: FnOnce(deadpool_postgres::Object) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Answer<T>> + Send + 'static,
    {
        let began = Instant::now();
        let answer = self.bridge.run(self.with_client(work)).await;
        self.answered(began, answer)
    }

    /// Whether the database answers, its schema up to date.
    pub(crate) fn reachable(&self) -> Result<(), JournalError> {
        self.block(|client| async move {
            client
                .simple_query("SELECT 1")
                .await
                .map(|_| ())
                .map_err(|e| said(&e))
        })
    }

    /// Appends `row`, committed before it returns.
    pub(crate) fn append(&self, row: Row) -> Result<(), JournalError> {
        let started = Instant::now();
        let done = self.block(move |client| async move { append(&client, &row).await });
        crate::metrics::metrics().journal_written(started.elapsed());
        done
    }

    /// [`PgStore::append`] for async callers.
    pub(crate) async fn append_async(&self, row: Row) -> Result<(), JournalError> {
        let started = Instant::now();
        let done = self
            .run(move |client| async move { append(&client, &row).await })
            .await;
        crate::metrics::metrics().journal_written(started.elapsed());
        done
    }

    /// Appends `row`, an intent, unless `conflict` finds, among the uses of its change id written
    /// since `since`, one that another made: one transaction, after a lock of the change id, so
    /// that two replicas checking one id at once cannot both find it free. The other's use when
    /// there is one (and nothing is written).
    pub(crate) async fn append_intent<U, C>(
        &self,
        row: Row,
        since: DateTime<Utc>,
        uses: U,
        conflict: C,
    ) -> Result<Option<super::changes::ChangeUse>, JournalError>
    where
        U: Fn(Vec<String>) -> Vec<super::changes::ChangeUse> + Send + 'static,
        C: FnOnce(&[super::changes::ChangeUse]) -> Option<super::changes::ChangeUse>
            + Send
            + 'static,
    {
        let change_id = row.change_id().to_owned();
        self.run(move |mut client| async move {
            let e = |e: tokio_postgres::Error| said(&e);
            let tx = client.transaction().await.map_err(e)?;
            let key = id_lock(&change_id);
            // Sent together, run in order: the read's snapshot is taken once the lock is held.
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
            let (locked, lines) = futures::join!(
                tx.execute("SELECT pg_advisory_xact_lock($1)", &params),
                rows::of_change(&tx, &change_id, since)
            );
            locked.map_err(e)?;
            let lines = lines.map_err(e)?;
            if let Some(other) = conflict(&uses(lines)) {
                return Ok(Some(other));
            }
            rows::insert(&tx, &row).await.map_err(e)?;
            tx.commit().await.map_err(e)?;
            Ok(None)
        })
        .await
    }

    /// The lines written at or after `since` (all of them without it), in order.
    pub(crate) fn lines_since(
        &self,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<String>, JournalError> {
        self.block(
            move |client| async move { rows::since(&client, since).await.map_err(|e| said(&e)) },
        )
    }

    /// The lines of `change_id` written at or after `since`, in order.
    pub(crate) fn lines_of_change(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<String>, JournalError> {
        self.block(of_change(change_id, since))
    }

    /// [`PgStore::lines_of_change`] for async callers.
    pub(crate) async fn lines_of_change_async(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<String>, JournalError> {
        self.run(of_change(change_id, since)).await
    }

    /// [`PgStore::live_leases`] for async callers.
    pub(crate) async fn live_leases_async(&self) -> Result<Vec<String>, JournalError> {
        let pool = self.pool.clone();
        self.run(move |_| async move { lease::live(&pool).await })
            .await
    }

    /// The lines after `seq`, each with its own.
    pub(crate) fn lines_after(&self, seq: i64) -> Result<Vec<(i64, String)>, JournalError> {
        self.block(
            move |client| async move { rows::after(&client, seq).await.map_err(|e| said(&e)) },
        )
    }

    /// Each naming of a VM (as JSON) with when, oldest first.
    pub(crate) fn namings(&self) -> Result<Vec<(DateTime<Utc>, String)>, JournalError> {
        self.block(|client| async move { rows::namings(&client).await.map_err(|e| said(&e)) })
    }

    /// Moves the whole changes written before `before` to the end of the file `to`.
    pub(crate) fn archive(
        &self,
        to: &std::path::Path,
        before: DateTime<Utc>,
    ) -> Result<Moved, JournalError> {
        let to = to.to_path_buf();
        self.block(
            move |mut client| async move { archive::archive(&mut client, &to, before).await },
        )
    }

    /// Keeps `value` as `kind`/`name` unless a value is kept there; the value kept.
    pub(crate) fn keep_once(
        &self,
        kind: &str,
        name: &str,
        value: &str,
    ) -> Result<String, JournalError> {
        let (kind, name, value) = (kind.to_owned(), name.to_owned(), value.to_owned());
        self.block(
            move |client| async move { kept::keep_once(&client, &kind, &name, &value).await },
        )
    }

    /// The value kept as `kind`/`name`, if any.
    pub(crate) fn kept(&self, kind: &str, name: &str) -> Result<Option<String>, JournalError> {
        let (kind, name) = (kind.to_owned(), name.to_owned());
        self.block(move |client| async move { kept::kept(&client, &kind, &name).await })
    }

    /// The lines of `log`, in order.
    pub(crate) fn log_lines(&self, log: &str) -> Result<Vec<String>, JournalError> {
        let log = log.to_owned();
        self.block(move |client| async move { kept::lines(&client, &log).await })
    }

    /// Runs `work` on the lines of `log` with the log's lock held, and appends the lines it pushed
    /// (in one transaction, committed before this returns) when it succeeds; nothing when it fails.
    pub(crate) fn with_log<T, E>(
        &self,
        log: &str,
        work: impl FnOnce(Vec<String>, &mut Vec<String>) -> Result<T, E>,
    ) -> Result<Result<T, E>, JournalError> {
        let (lines_tx, lines_rx) = std::sync::mpsc::sync_channel::<Answer<Vec<String>>>(1);
        let (append_tx, append_rx) = tokio::sync::oneshot::channel::<Vec<String>>();
        let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<Answer<()>>(1);
        let (pool, migrated, log) = (self.pool.clone(), self.migrated.clone(), log.to_owned());
        self.bridge.spawn(async move {
            let mut first = Some(lines_tx);
            let done = async {
                let mut client = Self::client(pool, migrated).await?;
                let tx = client.transaction().await.map_err(|e| said(&e))?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&kept::log_lock(&log)])
                    .await
                    .map_err(|e| said(&e))?;
                let lines = kept::lines(&tx, &log).await?;
                if let Some(to_caller) = first.take() {
                    let _ = to_caller.send(Ok(lines));
                }
                // No lines back: the work failed, and the transaction is rolled back.
                let Ok(appended) = append_rx.await else {
                    return Ok(());
                };
                kept::append(&tx, &log, &appended).await?;
                tx.commit().await.map_err(|e| said(&e))
            }
            .await;
            if let (Some(to_caller), Err(e)) = (first.take(), &done) {
                let _ = to_caller.send(Err(e.clone()));
            }
            let _ = done_tx.send(done);
        });
        let lines = lines_rx
            .recv()
            .unwrap_or_else(|_| Err("the process is ending".to_owned()))
            .map_err(|p| self.failed(p))?;
        let mut appended = Vec::new();
        let outcome = work(lines, &mut appended);
        if outcome.is_err() {
            drop(append_tx);
            let _ = done_rx.recv();
            return Ok(outcome);
        }
        let _ = append_tx.send(appended);
        done_rx
            .recv()
            .unwrap_or_else(|_| Err("the process is ending".to_owned()))
            .map_err(|p| self.failed(p))?;
        Ok(outcome)
    }

    /// The leases held now, by anyone.
    pub(crate) fn live_leases(&self) -> Result<Vec<String>, JournalError> {
        let pool = self.pool.clone();
        self.block(move |_| async move { lease::live(&pool).await })
    }

    /// Takes the lease `name`, waiting until `deadline` while another holds it. `None` when the
    /// deadline came first.
    pub(crate) async fn lease(
        self: &Arc<Self>,
        name: &str,
        deadline: Instant,
    ) -> Result<Option<Lease>, JournalError> {
        let mut pause = Duration::from_millis(5);
        loop {
            let (pool, held, holder) = (self.pool.clone(), self.held.clone(), self.holder.clone());
            let wanted = name.to_owned();
            let taken = self
                .run(move |_| async move { lease::try_take(&pool, &held, &wanted, &holder).await })
                .await?;
            if let Some(standing) = taken {
                return Ok(Some(Lease {
                    store: self.clone(),
                    standing,
                }));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let jittered = pause.mul_f64(0.5 + rand::random::<f64>());
            tokio::time::sleep(jittered.min(left)).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }
}

/// A lease held, let go when dropped.
#[derive(Debug)]
pub(crate) struct Lease {
    store: Arc<PgStore>,
    standing: Arc<Standing>,
}

impl Lease {
    /// Whether this process may still act on it.
    pub(crate) fn standing(&self) -> Arc<Standing> {
        self.standing.clone()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let name = self.standing.name.clone();
        self.store.held.remove(&name);
        let (pool, holder) = (self.store.pool.clone(), self.store.holder.clone());
        self.store
            .bridge
            .spawn(async move { lease::let_go(&pool, &name, &holder).await });
    }
}

async fn append(client: &deadpool_postgres::Object, row: &Row) -> Answer<()> {
    rows::insert(client, row).await.map_err(|e| said(&e))
}

/// The transaction lock of a change id's check and intent.
fn id_lock(change_id: &str) -> i64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("change id\0{change_id}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// This machine's name, to tell a lease's holder in `rewind_leases`.
fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned())
}

/// The work of reading the lines of `change_id` written at or after `since`, for
/// [`PgStore::block`] or [`PgStore::run`].
fn of_change(
    change_id: &str,
    since: DateTime<Utc>,
) -> impl FnOnce(deadpool_postgres::Object) -> futures::future::BoxFuture<'static, Answer<Vec<String>>>
+ Send
+ 'static {
    let change_id = change_id.to_owned();
    move |client| {
        Box::pin(async move {
            rows::of_change(&client, &change_id, since)
                .await
                .map_err(|e| said(&e))
        })
    }
}
