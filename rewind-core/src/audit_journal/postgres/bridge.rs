//! The database's own runtime: the threads that drive every query of a journal in PostgreSQL.
//!
//! The journal's reads are synchronous (the hook, the CLI, and guards that read on a runtime worker
//! because a hand-off costs more than a look); blocking on the caller's runtime from there would
//! panic or stall it. So queries run on a runtime of their own, and a caller waits for the answer:
//! a synchronous one on a channel, an async one on a oneshot, as for the file's writer thread.

use std::future::Future;

use tokio::runtime::Handle;

/// The thread and its runtime, stopped when the last clone of the journal is dropped.
#[derive(Debug)]
pub(super) struct Bridge {
    handle: Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Bridge {
    /// Starts the thread.
    pub(super) fn start() -> std::io::Result<Bridge> {
        // Two workers: with many guards at once, one thread encoding and decoding every
        // connection's messages was their queue.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rewind-journal-db")
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("rewind-journal-db".to_owned())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })?;
        Ok(Bridge {
            handle,
            stop: Some(stop),
        })
    }

    /// Runs `work` on the database's runtime and waits for it on this thread. `None` when the
    /// runtime is gone (the process is ending).
    pub(super) fn block<T: Send + 'static>(
        &self,
        work: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(work.await);
        });
        rx.recv().ok()
    }

    /// Runs `work` on the database's runtime and awaits it.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        self.handle.spawn(work).await.ok()
    }

    /// Starts `work` on the database's runtime, for as long as the runtime lives.
    pub(super) fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.handle.spawn(work);
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
