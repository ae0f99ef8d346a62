//! The guards and recoveries still running on tasks of their own ([`crate::progress::detached`],
//! and the page's actions), which the server waits for before the process ends.

use std::future::Future;

use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;

/// The calls' work running on tasks of their own ([`crate::progress::detached`], and what a person
/// starts from the page, [`crate::ui`]). The server waits
/// until it is done before the process ends ([`InFlight::settle`]): a task of the runtime is dropped
/// when `main` returns, so a client that closed the session mid-guard would otherwise cut the guard
/// short.
///
/// A thin front over tokio-util's [`TaskTracker`], which does the counting and the waiting; this
/// adds only the warning that says what the server waits for.
#[derive(Debug, Clone, Default)]
pub struct InFlight {
    /// Counts each piece of work it spawned until that ends; shared by every clone, so each
    /// session's calls, the page and the process's shutdown see one count.
    tracker: TaskTracker,
}

impl InFlight {
    /// Runs `work` on a task of its own, counted from now until it ends: whoever stops waiting for
    /// it (a call cancelled, a connection dropped) does not stop it, and the server waits for it.
    pub(crate) fn spawn<F>(&self, work: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.spawn(work)
    }

    /// How many are running now.
    pub fn count(&self) -> usize {
        self.tracker.len()
    }

    /// Waits until none is running, saying on stderr what it waits for. The work has deadlines of its
    /// own (the guard's, the recovery's wait), so this wait ends.
    pub async fn settle(&self) {
        let running = self.count();
        if running > 0 {
            tracing::warn!(
                "stopping while {running} guard(s) or recoveries run: finishing them first (their Zerto tasks read to the end, an FLR session unmounted, the journal written)"
            );
        }
        // A tracker's wait ends only once it is closed; closing takes nothing from it: work that
        // starts later is still counted, and waited for by a wait still pending.
        self.tracker.close();
        self.tracker.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn settle_waits_for_the_work_still_running_and_no_longer() {
        let in_flight = InFlight::default();
        tokio::time::timeout(Duration::from_secs(5), in_flight.settle())
            .await
            .expect("nothing runs: settled at once");
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let work = in_flight.spawn(async move {
            let _ = done_rx.await;
        });
        assert_eq!(in_flight.count(), 1);
        assert!(
            tokio::time::timeout(Duration::from_millis(100), in_flight.settle())
                .await
                .is_err(),
            "settle waits while work runs"
        );
        done_tx.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), in_flight.settle())
            .await
            .expect("settled once the work is done");
        work.await.unwrap();
        assert_eq!(in_flight.count(), 0);
    }
}
