//! The catalog and the journal are files on this machine, guarded by file locks: their work runs off
//! the async runtime ([`on_files`]), so a lock waited for never holds up the server's other requests.

use rewind_core::Rewind;

/// Runs catalog or journal work on a blocking thread: their file locks are waited for (a bounded
/// time, then an error naming the lock file), and no runtime worker may wait on a file, or every
/// other request of the server would wait with it.
pub(crate) async fn on_files<T: Send + 'static>(
    rewind: &Rewind,
    work: impl FnOnce(&Rewind) -> T + Send + 'static,
) -> T {
    let rewind = rewind.clone();
    rewind_core::local_state::off_runtime(move || work(&rewind)).await
}
