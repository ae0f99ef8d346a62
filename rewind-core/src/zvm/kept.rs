//! Listings kept for a bounded time: a site's inventory (every VM it has, protected or not) and its
//! whole listing of protected VMs. No ZVM filter answers whether an unprotected VM shares a name
//! with a protected one, or which VM has an IP address, and reading either listing costs what the
//! site's size makes it cost (26 MB for `/v1/vms` at 10,000 VMs). A long-lived process (the MCP
//! server) therefore reuses them while they are younger than the configured maximum age, and once
//! one is past half of it, the next use starts a read in the background so that lookups seldom wait
//! for it. The rows of a VM found, and so what a guard tags, never come from here.
//!
//! An answer's age counts from when its read was sent. A failed read keeps the previous answer, which
//! is still served until it is too old; after that, the caller reads (and sees the failure).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::RewindError;

/// One kept answer.
#[derive(Debug)]
struct Entry<T> {
    answer: Arc<T>,
    sent: Instant,
    /// A background read of it is under way.
    refreshing: bool,
}

/// Answers kept by key (a request path) for at most `max_age`.
#[derive(Debug)]
pub(crate) struct Kept<T> {
    max_age: Duration,
    entries: StdMutex<HashMap<String, Entry<T>>>,
}

/// What is kept under a key, by age.
enum Look<T> {
    /// Younger than half the maximum age, or past it with a background read already started.
    Fresh(Arc<T>),
    /// Past half the maximum age: served, and this caller starts the background read.
    Aging(Arc<T>),
    /// Nothing, or too old.
    Missing,
}

impl<T: Send + Sync + 'static> Kept<T> {
    /// Keeps answers for at most `max_age`; zero keeps nothing.
    pub(crate) fn new(max_age: Duration) -> Kept<T> {
        Kept {
            max_age,
            entries: StdMutex::new(HashMap::new()),
        }
    }

    /// The answer kept under `key` while it is young enough, else the answer of `read` sent now.
    /// `read` makes a future that owns what it needs, since a background read outlives the caller.
    pub(crate) async fn get<F, Fut>(
        self: &Arc<Self>,
        key: &str,
        read: F,
    ) -> Result<Arc<T>, RewindError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Arc<T>, RewindError>> + Send + 'static,
    {
        match self.look(key) {
            Look::Fresh(answer) => Ok(answer),
            Look::Aging(answer) => {
                let (kept, key, read, sent) =
                    (self.clone(), key.to_string(), read(), Instant::now());
                tokio::spawn(async move { kept.store(&key, read.await.ok(), sent) });
                Ok(answer)
            }
            Look::Missing => {
                let sent = Instant::now();
                let answer = read().await;
                self.store(key, answer.as_ref().ok().cloned(), sent);
                answer
            }
        }
    }

    fn look(&self, key: &str) -> Look<T> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let Some(entry) = entries.get_mut(key) else {
            return Look::Missing;
        };
        let age = entry.sent.elapsed();
        if age >= self.max_age {
            Look::Missing
        } else if age < self.max_age / 2 || entry.refreshing {
            Look::Fresh(entry.answer.clone())
        } else {
            entry.refreshing = true;
            Look::Aging(entry.answer.clone())
        }
    }

    /// Keeps `answer` (a read sent at `sent`) unless a newer one is kept; a failed read (`None`)
    /// only ends the background read.
    fn store(&self, key: &str, answer: Option<Arc<T>>, sent: Instant) {
        if self.max_age.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match (entries.get_mut(key), answer) {
            (Some(entry), Some(answer)) if entry.sent <= sent => {
                *entry = Entry {
                    answer,
                    sent,
                    refreshing: false,
                };
            }
            (Some(entry), _) => entry.refreshing = false,
            (None, Some(answer)) => {
                entries.insert(
                    key.to_string(),
                    Entry {
                        answer,
                        sent,
                        refreshing: false,
                    },
                );
            }
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zvm::error::tests::failure;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A read that answers how many reads were sent so far, counting itself.
    fn counting(
        reads: &Arc<AtomicU32>,
    ) -> impl Future<Output = Result<Arc<u32>, RewindError>> + use<> {
        let reads = reads.clone();
        async move { Ok(Arc::new(reads.fetch_add(1, Ordering::SeqCst) + 1)) }
    }

    #[tokio::test(start_paused = true)]
    async fn a_young_answer_is_reused_and_an_aging_one_is_read_again_in_the_background() {
        let kept = Arc::new(Kept::new(Duration::from_secs(30)));
        let reads = Arc::new(AtomicU32::new(0));
        let get = || kept.get("inv", || counting(&reads));
        assert_eq!(*get().await.unwrap(), 1);
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(*get().await.unwrap(), 1, "10 s old: reused");
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(
            *get().await.unwrap(),
            1,
            "20 s old: served while read again"
        );
        tokio::task::yield_now().await;
        assert_eq!(reads.load(Ordering::SeqCst), 2, "one background read");
        assert_eq!(
            *get().await.unwrap(),
            2,
            "the background read's answer is kept"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_past_the_maximum_age_is_never_served() {
        let kept = Arc::new(Kept::new(Duration::from_secs(30)));
        let reads = Arc::new(AtomicU32::new(0));
        kept.get("inv", || counting(&reads)).await.unwrap();
        tokio::time::advance(Duration::from_secs(31)).await;
        let answer = kept.get("inv", || counting(&reads)).await.unwrap();
        assert_eq!(*answer, 2, "read now, not served from what is kept");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_background_read_keeps_the_old_answer_until_it_is_too_old() {
        let kept: Arc<Kept<u32>> = Arc::new(Kept::new(Duration::from_secs(30)));
        kept.get("inv", || async { Ok(Arc::new(1)) }).await.unwrap();
        tokio::time::advance(Duration::from_secs(20)).await;
        let served = kept.get("inv", || async { Err(failure()) }).await.unwrap();
        assert_eq!(*served, 1);
        tokio::task::yield_now().await;
        tokio::time::advance(Duration::from_secs(5)).await;
        let still = kept.get("inv", || async { Err(failure()) }).await.unwrap();
        assert_eq!(*still, 1, "25 s old, still within the maximum age");
        tokio::time::advance(Duration::from_secs(6)).await;
        let late = kept.get("inv", || async { Err(failure()) }).await;
        assert!(
            late.is_err(),
            "31 s old: the caller reads, and sees the failure"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_maximum_age_reads_every_time() {
        let kept = Arc::new(Kept::new(Duration::ZERO));
        let reads = Arc::new(AtomicU32::new(0));
        for n in 1..=3 {
            assert_eq!(*kept.get("inv", || counting(&reads)).await.unwrap(), n);
        }
    }
}
