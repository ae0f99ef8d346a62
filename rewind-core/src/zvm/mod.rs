//! The HTTP client of one ZVM: TLS trust, timeouts, the single-flight token cache, read retries, the
//! client's own wire models and waiting for Zerto tasks.
//!
//! The transport:
//! - `client`: [`ZvmClient`], one site's transport: building, sending and retrying exchanges, and
//!   naming the site in what fails. It is HTTP, tokens and retry only.
//! - `error`: why an exchange failed (`CallError`), whether it may be sent again, and whether a
//!   write may still have happened.
//! - `answer`: how an answer's body is read (a model, one or many, a write's task identifier).
//! - `token`: the single-flight token cache.
//! - `retry`: capped, jittered backoff inside a deadline.
//! - `under_way`: the exchanges awaited, for a person watching.
//! - `api/`: the ZVM's resources (local site, VMs, VPGs, tasks, recovery operations, FLR, Extended
//!   Journal Copy), one file each, each an `impl ZvmClient` block.
//! - `wire`: serde models of ZVM JSON (one table).
//!
//! What rewind keeps of a site, above the transport:
//! - `site`: one configured site as the facade keeps it: its client, the reads concurrent callers
//!   share, the kept listings and the learnt timings ([`Site`]).
//! - `flight`: concurrent identical reads (a filtered VM listing, a site's inventory, the running
//!   inserts) share one exchange.
//! - `kept`: a site's inventory and its whole VM listing, reused for a bounded time.
//! - `inventory`: a site's inventory indexed by name and identifier.
//! - `timings`: what is learnt of a site's insert and listing times, kept for the next process.
//! - `port`: the narrow port between the guard's insert machine and a site.
//! - `task`: adaptive waiting for a Zerto task, and for a tagged checkpoint to be listed.

mod answer;
mod api;
mod client;
mod error;
mod flight;
pub mod inventory;
mod kept;
pub(crate) mod port;
pub mod retry;
mod site;
pub mod task;
pub(crate) mod timings;
pub(crate) mod token;
mod under_way;
pub mod wire;

pub(crate) use answer::{OneOrMany, decode, task_id_from_body};
pub use api::flr::{BROWSE_PAGE, BROWSE_PAGES, DOWNLOAD_TIMEOUT};
pub use client::ZvmClient;
pub(crate) use error::CallError;
pub use error::describe;
pub use site::Site;
pub use under_way::SLOW_EXCHANGE;
