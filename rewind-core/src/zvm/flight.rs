//! Single-flight reads: callers that ask for the same listing while a read of it is in flight share that
//! read's answer instead of each sending their own.
//!
//! Many concurrent guards each resolve their VM from the ZVM's full VM listing, which is large (about
//! 2 KB a row, hundreds of rows), and each reads the running inserts of every VPG before its own insert.
//! Without sharing, 64 concurrent guards send 64 identical listings of each and parse each, and the
//! client and the ZVM spend the time the guards should spend waiting on Zerto. A shared answer is never
//! older than a read the caller could have sent itself, since the shared read was sent before the
//! caller asked and answered after: it is as fresh as any read, and the task that follows a write still
//! decides what happened.
//!
//! Nothing is cached: once the read ends, the next caller sends a new one. Only success is shared; a
//! caller whose leader failed (or was dropped) reads for itself, so each caller gets its own error and
//! its own retries. The answer is handed out behind an `Arc`, so sharing it copies nothing.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};

use tokio::sync::watch;

use crate::error::RewindError;

/// The shared state of one read: `None` while in flight, then `Some(Some(answer))`, or `Some(None)`
/// when the read failed.
type State<T> = Option<Option<Arc<T>>>;

/// Concurrent reads of the same key share one exchange.
#[derive(Debug)]
pub(crate) struct SingleFlight<T> {
    in_flight: StdMutex<HashMap<String, watch::Receiver<State<T>>>>,
}

impl<T> Default for SingleFlight<T> {
    fn default() -> Self {
        SingleFlight {
            in_flight: StdMutex::new(HashMap::new()),
        }
    }
}

/// Whether this caller sends the read or waits for another's.
enum Role<T> {
    Lead(watch::Sender<State<T>>),
    Follow(watch::Receiver<State<T>>),
}

impl<T> SingleFlight<T> {
    /// The answer of the read of `key` in flight, or of `read` sent now.
    pub(crate) async fn run<F, Fut>(&self, key: &str, read: F) -> Result<Arc<T>, RewindError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, RewindError>>,
    {
        let role = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            // A read is joinable while it has not ended and its leader is still there.
            let joinable = in_flight
                .get(key)
                .filter(|rx| rx.borrow().is_none() && rx.has_changed().is_ok());
            match joinable {
                Some(rx) => Role::Follow(rx.clone()),
                None => {
                    let (tx, rx) = watch::channel(None);
                    in_flight.insert(key.to_string(), rx);
                    Role::Lead(tx)
                }
            }
        };
        match role {
            Role::Lead(tx) => {
                let result = read().await.map(Arc::new);
                tx.send_replace(Some(result.as_ref().ok().cloned()));
                let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
                // Forget the ended read unless a newer one has taken its key.
                if in_flight
                    .get(key)
                    .is_some_and(|rx| rx.same_channel(&tx.subscribe()))
                {
                    in_flight.remove(key);
                }
                result
            }
            Role::Follow(mut rx) => {
                let shared = match rx.wait_for(Option::is_some).await {
                    Ok(state) => state.clone().flatten(),
                    // The leader was dropped before it answered.
                    Err(_) => None,
                };
                match shared {
                    Some(answer) => Ok(answer),
                    None => read().await.map(Arc::new),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zvm::error::tests::failure;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use tokio::task::JoinHandle;

    /// A caller of `flight` in a task of its own, whose read of "vms" is counted in `reads`, takes
    /// 50 ms and answers `answer`.
    fn slow_caller<T: Send + Sync + 'static>(
        flight: &Arc<SingleFlight<T>>,
        reads: &Arc<AtomicUsize>,
        answer: fn() -> Result<T, RewindError>,
    ) -> JoinHandle<Result<Arc<T>, RewindError>> {
        let (flight, reads) = (flight.clone(), reads.clone());
        tokio::spawn(async move {
            flight
                .run("vms", || async {
                    reads.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    answer()
                })
                .await
        })
    }

    #[tokio::test]
    async fn concurrent_callers_share_one_read() {
        let flight = Arc::new(SingleFlight::<Vec<u32>>::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let callers = (0..16).map(|_| slow_caller(&flight, &reads, || Ok(vec![1, 2, 3])));
        for caller in futures::future::join_all(callers).await {
            assert_eq!(*caller.unwrap().unwrap(), vec![1, 2, 3]);
        }
        assert_eq!(reads.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_read_after_the_last_one_ended_is_sent_again() {
        let flight = SingleFlight::<u32>::default();
        let reads = AtomicUsize::new(0);
        for expected in 1..=3 {
            let n = flight
                .run("vms", || async {
                    Ok(reads.fetch_add(1, Ordering::SeqCst) as u32 + 1)
                })
                .await
                .unwrap();
            assert_eq!(*n, expected, "nothing is cached between reads");
        }
    }

    #[tokio::test]
    async fn different_keys_do_not_share() {
        let flight = SingleFlight::<String>::default();
        let (a, b) = tokio::join!(
            flight.run("site-a", || async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok("a".to_string())
            }),
            flight.run("site-b", || async { Ok("b".to_string()) }),
        );
        assert_eq!((a.unwrap().as_str(), b.unwrap().as_str()), ("a", "b"));
    }

    #[tokio::test]
    async fn when_the_shared_read_fails_each_follower_reads_for_itself() {
        let flight = Arc::new(SingleFlight::<u32>::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let leader = slow_caller(&flight, &reads, || Err(failure()));
        tokio::time::sleep(Duration::from_millis(10)).await;
        let follower = flight
            .run("vms", || async {
                reads.fetch_add(1, Ordering::SeqCst);
                Ok(7)
            })
            .await;
        assert!(leader.await.unwrap().is_err());
        assert_eq!(*follower.unwrap(), 7);
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_dropped_leader_does_not_strand_its_followers() {
        let flight = Arc::new(SingleFlight::<u32>::default());
        let leader = {
            let flight = flight.clone();
            tokio::spawn(async move {
                flight
                    .run("vms", || async {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        Ok(1)
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        let follower = {
            let flight = flight.clone();
            tokio::spawn(async move { flight.run("vms", || async { Ok(2) }).await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        leader.abort();
        let answer = tokio::time::timeout(Duration::from_secs(5), follower)
            .await
            .expect("the follower is not stranded");
        assert_eq!(*answer.unwrap().unwrap(), 2);
    }
}
