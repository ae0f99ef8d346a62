//! The exchanges of one client under way, for a person watching: what is awaited, where and since
//! when, listed for a progress line and said in the log once it has taken a while.

use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use crate::progress::Waiting;

/// After how long an exchange is said to be awaited: in the log at `-v`, and on a progress line.
pub const SLOW_EXCHANGE: Duration = Duration::from_secs(1);

/// The exchanges of one client under way; clones share them.
#[derive(Debug, Clone, Default)]
pub(crate) struct UnderWay(Arc<StdMutex<Exchanges>>);

/// The exchanges, by a number of their own.
#[derive(Debug, Default)]
struct Exchanges {
    next: u64,
    exchanges: Vec<(u64, String, Instant)>,
}

/// An exchange counted as under way until dropped.
struct Awaited {
    under_way: UnderWay,
    id: u64,
}

impl Drop for Awaited {
    fn drop(&mut self) {
        let mut under_way = self.under_way.lock();
        under_way.exchanges.retain(|(id, _, _)| *id != self.id);
    }
}

impl UnderWay {
    fn lock(&self) -> std::sync::MutexGuard<'_, Exchanges> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `exchange` (`what`, at `url` of `site`), counted as under way until it ends, and said in
    /// the log (info) once it has taken [`SLOW_EXCHANGE`], then every five seconds.
    pub(crate) async fn watch<F: Future>(
        &self,
        exchange: F,
        site: &str,
        what: String,
        url: &str,
    ) -> F::Output {
        let _awaited = self.begin(what.clone());
        noted_when_slow(exchange, site, &what, url).await
    }

    /// Counts `what` as under way until the value returned is dropped.
    fn begin(&self, what: String) -> Awaited {
        let mut under_way = self.lock();
        under_way.next += 1;
        let id = under_way.next;
        under_way.exchanges.push((id, what, Instant::now()));
        Awaited {
            under_way: self.clone(),
            id,
        }
    }

    /// The exchanges with `site` under way, oldest first.
    pub(crate) fn list(&self, site: &str) -> Vec<Waiting> {
        self.lock()
            .exchanges
            .iter()
            .map(|(_, what, since)| Waiting {
                site: site.to_owned(),
                what: what.clone(),
                since: since.elapsed(),
            })
            .collect()
    }
}

/// Runs `exchange`, saying in the log (info) once it has taken [`SLOW_EXCHANGE`], then every
/// five seconds, what is awaited, where and since when.
async fn noted_when_slow<F: Future>(exchange: F, site: &str, what: &str, url: &str) -> F::Output {
    tokio::pin!(exchange);
    let started = Instant::now();
    let mut next = SLOW_EXCHANGE;
    loop {
        match tokio::time::timeout_at((started + next).into(), &mut exchange).await {
            Ok(done) => return done,
            Err(_) => {
                tracing::info!(
                    "waiting for site {site}: {what} at {url}, for {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                next += Duration::from_secs(5);
            }
        }
    }
}
