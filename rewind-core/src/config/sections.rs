//! The settings sections the core reads: `[guard]`, `[hook]`, `[recover]`, `[lookup]` and `[http]`.
//! Each struct is its section: serde reads it from the file, a missing key is its default, and an
//! unknown key is refused.

use std::time::Duration;

use serde::Deserialize;

use super::fronts::{HttpAuth, TeamServer};
use super::values::{count, days, hours, poll_floor, secs, secs_or_zero};

/// The polling floor by default: an appliance's insert runs for seconds and its checkpoint shows
/// half a second later, so no poll needs to come sooner than this after another.
pub const APPLIANCE_POLL_FLOOR: Duration = Duration::from_millis(10);

/// How the guard waits and retries.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GuardSettings {
    /// How long one guard may take in all, from resolving the VM to the last checkpoint listed. When it
    /// runs out, the guard returns the task ids still running; it never drops them.
    #[serde(rename = "deadline_secs", deserialize_with = "secs")]
    pub deadline: Duration,
    /// At most how many times an insert that failed because another client's insert was running at
    /// the same VPG is retried (after waiting for that insert and a random pause). `None`, the
    /// default, retries until the deadline: N rivals at one VPG then all end guarded, one after the
    /// other, within about N inserts' time.
    pub back_to_back_retries: Option<u32>,
    /// How many times an insert whose outcome was unknown (no answer came, or one that could not be
    /// read, or a 5xx), and of which no trace was found, is sent again.
    pub lost_response_retries: u32,
    /// How far back a change id's earlier uses are looked for: a guard is refused when, within it,
    /// the id was used by another agent, action or person, or by a recovery. Written in days.
    #[serde(deserialize_with = "days")]
    pub change_id_horizon: Duration,
    /// The shortest interval between two reads of one task or one VPG's checkpoints. An appliance's
    /// insert runs for seconds, so the default (10 ms) costs nothing there; tests and benches
    /// against the simulator, whose tasks take 50 ms, set it lower. Written in milliseconds, from 2
    /// to 1,000.
    #[serde(rename = "poll_floor_ms", deserialize_with = "poll_floor")]
    pub poll_floor: Duration,
    /// A guard notes each tag whose way back (how long it stays in its VPG's journal) is shorter
    /// than this. Written in hours; 0 turns the note off.
    #[serde(rename = "min_way_back_hours", deserialize_with = "hours")]
    pub min_way_back: Duration,
}

impl Default for GuardSettings {
    fn default() -> Self {
        GuardSettings {
            deadline: Duration::from_secs(60),
            back_to_back_retries: None,
            lost_response_retries: 1,
            change_id_horizon: Duration::from_secs(30 * 24 * 60 * 60),
            poll_floor: APPLIANCE_POLL_FLOOR,
            min_way_back: Duration::from_secs(4 * 60 * 60),
        }
    }
}

/// Settings of the pre-tool hook (`rewind hook pre-tool-use`) of every agent host.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookSettings {
    /// How long a guard of a VM lets mutating tool calls on that VM through without a new guard.
    #[serde(rename = "window_secs", deserialize_with = "secs")]
    pub window: Duration,
    /// The team server whose guards count too (`[hook.team]`), when this machine's agent guards
    /// through one.
    pub team: Option<TeamServer>,
}

impl Default for HookSettings {
    fn default() -> Self {
        HookSettings {
            window: Duration::from_secs(15 * 60),
            team: None,
        }
    }
}

/// How long a bounded recover waits for its Zerto tasks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecoverSettings {
    /// The shortest time each recovery task (an FLR mount or unmount, a failover test, a clone) is
    /// waited for; the guard deadline is used instead when it is longer. A mount or a test takes
    /// longer than a tag. A task still running then is reported with its id, never dropped.
    #[serde(rename = "wait_floor_secs", deserialize_with = "secs")]
    pub wait_floor: Duration,
    /// How long a journal VM restore waits for a person's commit before Zerto rolls it back by
    /// itself (the only commit policy rewind sends is Rollback).
    #[serde(rename = "restore_wait_secs", deserialize_with = "secs")]
    pub restore_wait: Duration,
}

impl Default for RecoverSettings {
    fn default() -> Self {
        RecoverSettings {
            wait_floor: Duration::from_secs(10 * 60),
            restore_wait: Duration::from_secs(60 * 60),
        }
    }
}

impl RecoverSettings {
    /// How long each recovery task is waited for under `guard`: the guard deadline, but at least
    /// [`RecoverSettings::wait_floor`].
    pub fn wait(&self, guard: &GuardSettings) -> Duration {
        guard.deadline.max(self.wait_floor)
    }
}

/// How far `rewind diff` walks, and how much of a file it compares.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiffSettings {
    /// The most entries (files and folders) listed of each checkpoint compared; the diff says
    /// where it stopped.
    #[serde(deserialize_with = "count")]
    pub max_entries: usize,
    /// The deepest folder listed below each path asked for (0: only the path's own items).
    pub max_depth: usize,
    /// The largest file whose content `--content` compares; larger ones are said to be too large.
    #[serde(deserialize_with = "count")]
    pub content_max_bytes: usize,
}

impl Default for DiffSettings {
    fn default() -> Self {
        DiffSettings {
            max_entries: 10_000,
            max_depth: 16,
            content_max_bytes: 256 * 1024,
        }
    }
}

/// How a VM lookup reuses what it read.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LookupSettings {
    /// How old a site's inventory (every VM it has, protected or not) and its whole listing of
    /// protected VMs may be when a lookup uses them again; past half of it, one is read again in the
    /// background. Only what no ZVM filter answers comes from them: an unprotected VM of the same
    /// name, an IP address, a name in letters other than ASCII. The rows of the VM found, and so the
    /// VPGs a guard tags, are always read at the time of the lookup. Zero reads them every time.
    #[serde(rename = "inventory_max_age_secs", deserialize_with = "secs_or_zero")]
    pub inventory_max_age: Duration,
}

impl Default for LookupSettings {
    fn default() -> Self {
        LookupSettings {
            inventory_max_age: Duration::from_secs(30),
        }
    }
}

/// `[http]`: timeouts and retries of every HTTP call to a ZVM, and (`[http.auth]`) who may use
/// rewind-mcp over HTTP.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// How long to wait for a TCP (and TLS) connection.
    #[serde(rename = "connect_timeout_secs", deserialize_with = "secs")]
    pub connect_timeout: Duration,
    /// How long one request may take, connection included.
    #[serde(rename = "request_timeout_secs", deserialize_with = "secs")]
    pub request_timeout: Duration,
    /// How long a connection that was refused keeps being tried again, with capped, jittered
    /// backoff: a ZVM restarting comes back within it, and one that is down is said soon.
    #[serde(rename = "connect_retry_secs", deserialize_with = "secs")]
    pub connect_retry: Duration,
    /// How long a read (and a token request) whose answer was started keeps being retried on 502,
    /// 503, 504 and a lost answer, with capped, jittered backoff.
    #[serde(rename = "read_retry_secs", deserialize_with = "secs")]
    pub read_retry: Duration,
    /// Sign-in to rewind-mcp over HTTP (`[http.auth]`); `None` keeps it loopback-only.
    pub auth: Option<HttpAuth>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(30),
            connect_retry: Duration::from_secs(3),
            read_retry: Duration::from_secs(15),
            auth: None,
        }
    }
}
