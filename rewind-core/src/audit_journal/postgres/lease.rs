//! Leases: the locks replicas share, rows of `rewind_leases` that their holder renews.
//!
//! A lease is taken when its row is missing or has run out by the database's clock, and renewed by
//! its holder every [`RENEW_EVERY`]. The holder counts its lease as its own only until [`LENGTH`]
//! less [`MARGIN`] after it sent the last renewal that came back, by its own monotonic clock: the
//! database's end of the lease is later than that, since the database read its clock after the
//! renewal was sent. So a replica cut off from the database, or paused, stops acting on a lease
//! (sending an insert) before another replica can take it over. A session advisory lock would not
//! do: the server lets go of it the moment it sees the connection close, while its holder may not
//! know yet; and it needs a connection held per lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_postgres::Pool;

/// How long a lease lasts after its last renewal, by the database's clock.
pub(crate) const LENGTH: Duration = Duration::from_secs(10);

/// How much sooner than the database its holder counts it ended.
pub(crate) const MARGIN: Duration = Duration::from_secs(3);

/// How often a holder renews its leases.
pub(crate) const RENEW_EVERY: Duration = Duration::from_secs(2);

/// Until when, by this process's clock, it may act on a lease it holds.
#[derive(Debug)]
pub(crate) struct Standing {
    pub(crate) name: String,
    until: Mutex<Instant>,
}

impl Standing {
    /// Whether the lease is still this process's to act on.
    pub(crate) fn holds(&self) -> bool {
        Instant::now() < *self.until.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn renewed(&self, sent: Instant) {
        *self.until.lock().unwrap_or_else(|p| p.into_inner()) = sent + LENGTH - MARGIN;
    }

    fn lost(&self) {
        *self.until.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }
}

/// The leases this process holds, by name.
#[derive(Debug, Default)]
pub(crate) struct Held {
    by_name: Mutex<HashMap<String, Arc<Standing>>>,
}

impl Held {
    fn names(&self) -> Vec<String> {
        let held = self.by_name.lock().unwrap_or_else(|p| p.into_inner());
        held.keys().cloned().collect()
    }

    pub(crate) fn remove(&self, name: &str) {
        let mut held = self.by_name.lock().unwrap_or_else(|p| p.into_inner());
        held.remove(name);
    }

    fn get(&self, name: &str) -> Option<Arc<Standing>> {
        let held = self.by_name.lock().unwrap_or_else(|p| p.into_inner());
        held.get(name).cloned()
    }
}

/// One try to take the lease `name` for `holder`: its standing when taken, `None` when another
/// holds it.
pub(crate) async fn try_take(
    pool: &Pool,
    held: &Held,
    name: &str,
    holder: &str,
) -> Result<Option<Arc<Standing>>, String> {
    let client = pool.get().await.map_err(super::said::pool_said)?;
    let sent = Instant::now();
    let taken = client
        .query_opt(
            "INSERT INTO rewind_leases (name, holder, until)
             VALUES ($1, $2, now() + make_interval(secs => $3))
             ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until
             WHERE rewind_leases.until < now()
             RETURNING holder",
            &[&name, &holder, &LENGTH.as_secs_f64()],
        )
        .await
        .map_err(|e| super::said::said(&e))?;
    if taken.is_none() {
        return Ok(None);
    }
    let standing = Arc::new(Standing {
        name: name.to_owned(),
        until: Mutex::new(sent + LENGTH - MARGIN),
    });
    let mut by_name = held.by_name.lock().unwrap_or_else(|p| p.into_inner());
    by_name.insert(name.to_owned(), standing.clone());
    Ok(Some(standing))
}

/// Lets go of the lease `name`, unless another took it over meanwhile.
pub(crate) async fn let_go(pool: &Pool, name: &str, holder: &str) {
    if let Ok(client) = pool.get().await {
        let _ = client
            .execute(
                "DELETE FROM rewind_leases WHERE name = $1 AND holder = $2",
                &[&name, &holder],
            )
            .await;
    }
}

/// The names of the leases someone holds now, by the database's clock.
pub(crate) async fn live(pool: &Pool) -> Result<Vec<String>, String> {
    let client = pool.get().await.map_err(super::said::pool_said)?;
    let rows = client
        .query("SELECT name FROM rewind_leases WHERE until > now()", &[])
        .await
        .map_err(|e| super::said::said(&e))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Renews every lease `held` names, for as long as `held` lives; a lease the database no longer
/// gives `holder` is counted lost at once, and one not renewed runs out by its own clock. A
/// renewal that fails is said in one line naming the database (`place`), once until one succeeds.
pub(crate) async fn renew(pool: Pool, held: std::sync::Weak<Held>, holder: String, place: String) {
    let mut said = false;
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let Some(held) = held.upgrade() else {
            return;
        };
        let names = held.names();
        if names.is_empty() {
            continue;
        }
        let sent = Instant::now();
        let renewed = async {
            let client = pool.get().await.map_err(super::said::pool_said)?;
            client
                .query(
                    "UPDATE rewind_leases SET until = now() + make_interval(secs => $1)
                     WHERE holder = $2 AND name = ANY($3) RETURNING name",
                    &[&LENGTH.as_secs_f64(), &holder, &names],
                )
                .await
                .map_err(|e| super::said::said(&e))
        };
        let rows = match tokio::time::timeout(MARGIN, renewed).await {
            Ok(Ok(rows)) => {
                said = false;
                rows
            }
            failed => {
                if !said {
                    let why = match failed {
                        Ok(Err(why)) => why,
                        _ => "no answer in time".to_owned(),
                    };
                    tracing::warn!(
                        "the journal's database PostgreSQL {place} does not renew this replica's leases ({why}): no insert is sent under them once they may have run out"
                    );
                    said = true;
                }
                continue;
            }
        };
        let kept: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        for name in &names {
            let Some(standing) = held.get(name) else {
                continue;
            };
            match kept.contains(name) {
                true => standing.renewed(sent),
                false => standing.lost(),
            }
        }
    }
}
