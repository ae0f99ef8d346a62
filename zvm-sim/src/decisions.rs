//! Every decision the simulator takes where the real ZVM API is silent, and every default.
//!
//! The reference (`zvm-api.md`, §9) fixes most of these; the rest are the simulator's own choices,
//! made the way a ZVM 10.x appliance would most likely behave. They live here, in one place, so that
//! when a real appliance says otherwise there is one line to change. The README lists them too.
//!
//! A few decisions act in one place only and are kept there, named here so they can be found:
//! - `GET /v1/vms/{id}` of a VM in several VPGs visible from the site without `vpgIdentifier` is 400,
//!   naming the VPGs (`api/vms.rs`);
//! - `/v1/virtualizationsites/{id}/vms` lists only VMs that no VPG protects (`api/sites.rs`);
//! - `/v1` paths match case-insensitively, Keycloak paths do not (`app.rs`);
//! - JSON bodies need a JSON content type, else 415, and their keys match case-insensitively;
//!   query keys and values match case-insensitively and an empty value is absent (`http/extract.rs`);
//! - the call log skips `/_sim` and masks secret-looking query values (`api/call_log.rs`);
//! - Keycloak form fields are case-sensitive and error bodies are Keycloak's (`api/keycloak.rs`);
//! - an error message echoes at most 200 characters of any one value and 2,000 in all, a longer one
//!   cut with `…` and its length (`http/error.rs`);
//! - every FLR route refuses the Operator role with 403, and a download URL is
//!   `/v1/flrs/{id}/downloads/{download}`, a zip's entries named by guest path (`api/flrs.rs`);
//! - FLR's answers to missing paths (404), sessions not mounted (409) and checkpoints outside the
//!   journal (400), and an unmount while mounting stopping the mount task (`world/flr.rs`);
//! - which state conflicts of recovery operations are 409, latest checkpoint and every VM by
//!   default, clones as `<vm>-clone` VMs, failover and move committing at their task's end
//!   (`world/recovery.rs`); `CloneStart` reading `CheckpointId` and ignoring unknown keys, and the
//!   default commit policy (`api/actions.rs`); a JSON `null` body read as no body (`http/extract.rs`);
//! - fault rules: pattern syntax, seeded decisions, how actions combine (`world/faults.rs`), and how a
//!   lost response closes its connection (`api/faults.rs`);
//! - the saved-state format and its checks (`world/state.rs`), certificates (`tls.rs`), and the
//!   shape of generated worlds (`world/generate.rs`);
//! - every connection sets TCP_NODELAY, as an appliance's nginx front does, so an answer leaves
//!   as it is written (`serve.rs`);
//! - where a journal's hard limit cuts its history, a burst that does not fit taking everything
//!   before it (`world/journal.rs`); a journal judged only once it has written for its history and
//!   while it writes, `HistoryNotMeetingSLA` below the configured history to the minute, and each
//!   history alert's transitions at their own moments (`world/history.rs`);
//! - Extended Journal Copy: a refused manual run failing its task rather than its request, an abort
//!   answering 200 without a body, a retention set expiring to the millisecond and listed by the
//!   ZVMs that see its VPG (`world/retention.rs`, `api/ltr.rs`); `Bflr` at the repository's site and its
//!   refusals (`world/flr.rs`); retention sets in points in time with `Checkpoint` null
//!   (`api/vms.rs`).
//!
//! What is deliberately absent: the client's "protecting VPG" rule. The client keeps its own copy of
//! it; the simulator only knows when a VPG writes checkpoints and accepts tagged inserts, which is a
//! ZVM's behaviour ([`writes_checkpoints`]).

use std::time::Duration;

use crate::enums::{status, substatus};

/// `Version` of every simulated ZVM (10.0 Update 6, the release the reference's Swagger comes from).
pub const ZVM_VERSION: &str = "10.0.60";
/// `DisplayVersion`.
pub const ZVM_DISPLAY_VERSION: &str = "10.0 Update 6";
/// `ZvmApiVersion` (the Swagger document's version).
pub const ZVM_API_VERSION: &str = "1.0";
/// `SiteType`: both sites run on vCenter.
pub const SITE_TYPE: &str = "VCenter";
/// `SiteTypeVersion`.
pub const SITE_TYPE_VERSION: &str = "8.0.2";
/// `Port` of a peer site (SW10: "The default port is 9081").
pub const PEER_PORT: u16 = 9081;

/// Where the local site (Boston) listens by default: the Windows ZVM's historical API port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9669";
/// Where the peer site (Denver) listens by default.
pub const DEFAULT_PEER_LISTEN: &str = "127.0.0.1:9670";

/// Access-token lifetime on the simulated clock: Keycloak's realm default.
pub const DEFAULT_TOKEN_TTL: Duration = Duration::from_secs(300);
/// Refresh-token lifetime (password grant only): Keycloak's default SSO session idle time.
pub const REFRESH_TOKEN_TTL: Duration = Duration::from_secs(1800);
/// The Keycloak realm every ZVM appliance uses.
pub const REALM: &str = "zerto";
/// The public Keycloak client that the password grant goes through.
pub const PUBLIC_CLIENT_ID: &str = "zerto-client";
/// The scope Keycloak reports for the tokens it issues.
pub const TOKEN_SCOPE: &str = "profile email";
/// The user name Keycloak gives a confidential client's service account.
pub fn service_account_name(client_id: &str) -> String {
    format!("service-account-{client_id}")
}

/// How long a request's body may take to arrive in whole, from when its headers did. A client that
/// stops sending midway gets 408 instead of holding a connection and a task for ever.
pub const BODY_DEADLINE: Duration = Duration::from_secs(30);

/// The largest body a site reads: a saved state restored through `PUT /_sim/state` (a generated
/// world of 10,000 VMs saves to about 20 MB). Each route's own limit still applies after.
pub(crate) const MAX_STATE_BYTES: usize = 1024 * 1024 * 1024;

/// A `WithholdResponse` fault keeps a connection silent at most this long (real time), then closes
/// it: a client without a timeout is not held for ever, and a simulator that stops is not held up.
pub const WITHHOLD_FOR: Duration = Duration::from_secs(60 * 60);
/// A `CutResponse` fault waits this long (real time) after sending half the body before it drops
/// the connection, so the status, headers and that half are on the wire first, as when a
/// connection breaks mid-transfer.
pub const CUT_AFTER: Duration = Duration::from_millis(50);
/// An `InsertAsAnotherClient` fault inserts as this ZVM user (an operator in the ZVM's UI, the
/// `InitiatedBy` a client sees on the task) ...
pub const ANOTHER_CLIENT: &str = "admin";
/// ... a tagged checkpoint of this name.
pub const ANOTHER_CLIENTS_CHECKPOINT: &str = "another client's checkpoint";

/// The latest moment the simulated clock shows (the last millisecond of the year 9999, the end of
/// what ISO 8601's four-digit years and the wire format can write). A clock move past it is refused,
/// and a fast clock stops there, rather than wrapping around to 1970.
pub const LATEST_TIME_RFC3339: &str = "9999-12-31T23:59:59.999Z";

/// How long a Zerto task runs by default, before jitter.
pub const DEFAULT_TASK_DURATION: Duration = Duration::from_millis(2000);
/// Seeded jitter on every task's duration by default: a uniform factor in `1 ± TASK_DURATION_JITTER`.
/// Real tasks never take exactly as long twice, so clients are tested against durations that vary.
/// `Options::task_jitter` (`--task-jitter`) changes it; 0 gives every task exactly its nominal
/// duration, for benches that measure against a floor of D + L. A task draws its factor from the seed
/// whatever the jitter, so a seed gives the same task ids with and without it.
pub const TASK_DURATION_JITTER: f64 = 0.2;
/// How long after its task Completed a tagged checkpoint shows up in the checkpoint list.
pub const DEFAULT_LISTING_LAG: Duration = Duration::from_millis(500);
/// Simulated seconds per real second.
pub const DEFAULT_TIME_SCALE: f64 = 1.0;
/// `Options::for_tests`: short tasks so tests finish quickly, still long enough to be seen running.
pub const TEST_TASK_DURATION: Duration = Duration::from_millis(50);
/// `Options::for_tests`: a short listing lag.
pub const TEST_LISTING_LAG: Duration = Duration::from_millis(20);

/// A terminal task stays listed this long after it ended, in simulated time (`GET /v1/tasks`,
/// `GET /v1/tasks/{id}`, `/_sim/tasks`); then it is forgotten, as a ZVM ages out its task history.
/// A day is far longer than any test or bench reads back, which they do right after their runs.
pub const TASK_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);
/// At most this many terminal tasks stay listed whatever their age, the most recently started ones:
/// the bound that holds when the clock is frozen or tasks arrive by the thousand each second (a
/// 20-second wrk run of 718,279 inserts once kept 1.9 GB). They are forgotten in bulk once twice as
/// many are held, so the cost is spread over many tasks. Running tasks, and tasks a failover test,
/// clone, live operation, FLR session or pending task end still refers to, are always kept.
pub const TASKS_KEPT: usize = 50_000;
/// The call log keeps the most recent this many calls, forgetting the older ones in bulk once twice
/// as many are held: far more than a test or a bench reads back, about 100 MB at most. A call may
/// then name a task that has aged out (its `TaskId` stays as it was).
pub const CALLS_KEPT: usize = 250_000;

/// A refused tagged insert (another insert running, a VPG in a sync, an Initializing VPG) still runs
/// as a task for this fraction of its duration, then ends Failed: the refusal is only visible to a
/// client that reads the task, as on a real appliance.
pub const REFUSED_TASK_FRACTION: f64 = 0.1;

/// Automatic checkpoints are written every 5 s of simulated time (Zerto: "every few seconds").
pub const CHECKPOINT_INTERVAL_MS: i64 = 5_000;
/// Automatic checkpoints have `Type` 0; tagged ones `Type` 1 (the names of the 0..2 enum are unknown).
pub const CHECKPOINT_TYPE_AUTOMATIC: u8 = 0;
/// See [`CHECKPOINT_TYPE_AUTOMATIC`].
pub const CHECKPOINT_TYPE_TAGGED: u8 = 1;
/// Checkpoint identifiers are decimal counters. The simulator derives them from the checkpoint's
/// 5-second slot, the VPG and a per-slot sequence, so automatic checkpoints never have to be stored
/// and identifiers still grow with time within a VPG. This many tagged checkpoints fit in one slot
/// of one VPG; one more ends its insert task Failed.
pub const TAGS_PER_SLOT: u64 = 999;
/// The longest journal history a VPG can be configured with (30 days). Slots are counted from this
/// long before the epoch, so every checkpoint that can ever be listed has a positive identifier.
pub const MAX_HISTORY_MINUTES: u32 = 30 * 24 * 60;
/// Journal history of a VPG when the world file gives none.
pub const DEFAULT_HISTORY_MINUTES: u32 = 60;
/// Configured RPO of a VPG when the world file gives none (the mocks' value).
pub const DEFAULT_RPO_SECONDS: u32 = 300;

/// A journal's hard limit is modelled as the time of the VPG's usual writing it holds ("write
/// time"), not as megabytes: the sources say what a full journal does (the oldest checkpoints are
/// promoted early, so it holds less history than configured), not how a ZVM turns its size into
/// history, and tests want to say "a burst as big as 90 minutes of writes". Without a world-file
/// limit (`[journal_limits]`), a journal holds this percentage of its configured history: a
/// journal sized with headroom, never full at the usual rate, that a large enough burst fills.
pub const DEFAULT_JOURNAL_ROOM_PERCENT: u32 = 150;
/// The largest room a world file may give a journal: ten times the longest history (300 days of
/// writes).
pub const MAX_JOURNAL_ROOM_MINUTES: u32 = 10 * MAX_HISTORY_MINUTES;
/// The largest burst `/_sim/vpgs/{id}/journal-burst` takes, in minutes of usual writing: as much as
/// the largest room, which empties any journal.
pub const MAX_BURST_MINUTES: u32 = MAX_JOURNAL_ROOM_MINUTES;

/// The room of a journal whose world file gives no limit: [`DEFAULT_JOURNAL_ROOM_PERCENT`] of its
/// configured history, in minutes.
pub fn default_journal_room(history_minutes: u32) -> u32 {
    history_minutes.saturating_mul(DEFAULT_JOURNAL_ROOM_PERCENT) / 100
}

/// "Keep For" of a retention set written by a manual Extended Journal Copy run
/// (`POST /v1/ltr/vpgs/{id}/retentionstart`) when the world file's repository gives no
/// `keep_days`: 30 days. Zerto documents that a set takes the Keep For in force when it is written
/// (KB-KEEP) but not which one a manual run takes; the simulator gives each repository one Keep
/// For, the daily retention a VPG using it would most likely have.
pub const DEFAULT_KEEP_FOR_DAYS: u32 = 30;
/// The longest Keep For a world file may give: 7 years, a yearly retention's longest.
pub const MAX_KEEP_FOR_DAYS: u32 = 7 * 366;
/// `TotalCapacityGB` of a repository when the world file gives none: 10 TB.
pub const DEFAULT_REPOSITORY_CAPACITY_GB: u64 = 10_240;

/// Every repository is an NFS share (`Nfs.Path` `nfs://backup.<site>.example.internal/zerto/<name>`).
/// SW10 numbers `StorageType` (0..11) and `ConnectionType` (0..5) without names; the simulator
/// takes NFS's position among `RepositoriesSettingsApi`'s targets (`smb`, `s3`, `nfs`, `catalyst`,
/// `azure`, `s3-Compatible`), 2, for both: a guess.
pub const REPOSITORY_STORAGE_TYPE: u8 = 2;
/// See [`REPOSITORY_STORAGE_TYPE`].
pub const REPOSITORY_CONNECTION_TYPE: u8 = 2;
/// `ConnectionType` and `StorageType` of `/v1/virtualizationsites/{id}/repositories`, which SW10
/// gives as strings.
pub const REPOSITORY_CONNECTION_NAME: &str = "NFS";
/// A retention set's `BackupMethod`: every set a manual run writes is a full one (SW10's
/// `BackupMethod` enum has no names; the catalogue's path says "full").
pub const RETENTION_SET_METHOD: &str = "Full";
/// A retention set's `ActionType`: written by a manual run (no scheduled runs are modelled).
pub const RETENTION_SET_ACTION: &str = "Manual";
/// A retention set's `StatusType` once written (sets appear only when their run completed).
pub const RETENTION_SET_STATUS: &str = "Success";
/// A retention set's `RetentionSetImmutability.ImmutabilityState`: NFS repositories are not
/// immutable.
pub const RETENTION_SET_IMMUTABILITY: &str = "NotImmutable";

/// A resync started through `/_sim/vpgs/{id}/resync` without `Seconds` lasts this long.
pub const DEFAULT_RESYNC_SECONDS: f64 = 30.0;
/// ... and shows this substatus unless `SubStatus` says otherwise.
pub const DEFAULT_RESYNC_SUBSTATUS: u8 = substatus::FULL_SYNC;
/// A resync leaves one event (`GET /v1/events`) when it starts, by `System`: `EventType` 22
/// `InitFullSync`, the one sync among the event types ZVM 7 named (SW10 numbers 0..120 and names
/// none), with this description, which names what the wipe removed. It runs as no task: a ZVM
/// shows a sync a VPG change caused as the VPG's status, not as a task a user could poll (a force
/// sync, which a user asks for, is a task).
pub fn resync_description(
    vpg_name: &str,
    substatus_name: &str,
    count: u64,
    earliest: Option<&str>,
    tags: &[String],
    until: &str,
) -> String {
    const NAMED: usize = 10;
    let mut named: Vec<String> = tags.iter().take(NAMED).map(|t| format!("'{t}'")).collect();
    if tags.len() > NAMED {
        named.push(format!("and {} more", tags.len() - NAMED));
    }
    let removed = match earliest {
        Some(earliest) if count > 0 => format!(
            "{count} checkpoints from {earliest}, {} tagged{}",
            tags.len(),
            if named.is_empty() {
                String::new()
            } else {
                format!(" ({})", named.join(", "))
            }
        ),
        _ => "no checkpoint: the journal was empty".to_owned(),
    };
    format!(
        "Synchronization of VPG {vpg_name} started ({substatus_name}): the resync removed every \
         checkpoint of its journal, {removed}. Checkpoints are written again once it ends at \
         {until}."
    )
}

/// The substatuses a resync may show.
pub const RESYNC_SUBSTATUSES: [u8; 3] =
    [substatus::SYNC, substatus::DELTA_SYNC, substatus::FULL_SYNC];

/// `--generate N` makes at most this many VMs: about ten times the 10,000 measured (90 MB), so a
/// mistyped N is refused with the range instead of exhausting memory.
pub const MAX_GENERATED_VMS: u64 = 100_000;

/// A VM can be in at most three VPGs (Zerto one-to-many replication).
pub const MAX_VPGS_PER_VM: usize = 3;

/// With a frozen clock (time scale 0) and no explicit epoch, simulated time starts here, so a frozen
/// run is byte-for-byte repeatable. With a running clock it starts at the wall clock (rounded down to
/// the second), so scripts that compare the ZVM's times with their own clock see sensible values.
pub const FROZEN_EPOCH_RFC3339: &str = "2026-01-01T00:00:00Z";

/// Substatuses during which a ZVM writes no checkpoints and refuses tagged inserts: the initial,
/// volume, delta, full and bitmap syncs. (During a bitmap sync recovery to the last checkpoint stays
/// possible, but no new checkpoint is added, so a tag cannot be either.)
pub const SYNC_SUBSTATUSES: [u8; 8] = [
    substatus::INITIAL_SYNC,
    substatus::VOLUME_INITIAL_SYNC,
    substatus::SYNC,
    substatus::DELTA_SYNC,
    substatus::FULL_SYNC,
    substatus::VOLUME_DELTA_SYNC,
    substatus::VOLUME_FULL_SYNC,
    substatus::BITMAP_SYNC,
];

/// Whether a VPG with this status and substatus writes checkpoints (and so accepts a tagged insert):
/// it must be replicating (MeetingSLA, NotMeetingSLA, RpoNotMeetingSLA or HistoryNotMeetingSLA),
/// not in a sync and not paused.
pub fn writes_checkpoints(vpg_status: u8, vpg_substatus: u8) -> bool {
    (status::MEETING_SLA..=status::HISTORY_NOT_MEETING_SLA).contains(&vpg_status)
        && !SYNC_SUBSTATUSES.contains(&vpg_substatus)
        && vpg_substatus != substatus::REPLICATION_PAUSED_USER_INITIATED
}

/// The `CompleteReason` of an insert refused because another insert is still running at the VPG.
pub fn reason_insert_running(vpg_name: &str, running_task: &str) -> String {
    format!(
        "Another tagged checkpoint insert is running for VPG '{vpg_name}' (task {running_task}); \
         only one insert can run at a time in a VPG. Wait until that task ends, then insert again."
    )
}

/// The `CompleteReason` of an insert refused because the VPG does not write checkpoints now.
pub fn reason_not_writing(vpg_name: &str, status_name: &str, substatus_name: &str) -> String {
    format!(
        "VPG '{vpg_name}' cannot take a tagged checkpoint while it is {status_name} \
         ({substatus_name}): it writes no checkpoints in this state. Wait until it meets its SLA again."
    )
}

/// The `CompleteReason` of an insert whose journal was cleared or stopped while it ran.
pub fn reason_journal_lost(vpg_name: &str) -> String {
    format!(
        "VPG '{vpg_name}' stopped writing checkpoints (a resync or a status change) while the tagged \
         checkpoint was being inserted; the checkpoint was not kept. Insert again once the VPG is \
         meeting its SLA."
    )
}

/// The `CompleteReason` of an insert that found its 5-second slot full.
pub fn reason_slot_full(vpg_name: &str) -> String {
    format!(
        "VPG '{vpg_name}' already has {TAGS_PER_SLOT} tagged checkpoints within these 5 seconds; \
         insert again a moment later."
    )
}

/// The 409 of a journal burst at a VPG that writes no checkpoints now: its writes are tracked
/// elsewhere (a sync's bitmap) and do not reach the journal.
pub fn refusal_burst_not_writing(
    vpg_name: &str,
    status_name: &str,
    substatus_name: &str,
) -> String {
    format!(
        "VPG '{vpg_name}' writes no checkpoints while it is {status_name} ({substatus_name}), so a \
         burst of writes does not reach its journal. Burst a VPG that meets its SLA."
    )
}

/// The 400 of an FLR asked of a ZVM that is not the VPG's recovery site (§9): it names the site
/// that can run it.
pub fn refusal_flr_wrong_site(vpg_name: &str, recovery_site: &str, this_site: &str) -> String {
    format!(
        "File-level restore of VPG '{vpg_name}' runs at its recovery site {recovery_site}, where \
         its journal is; this is {this_site}. Send the request to {recovery_site}'s ZVM."
    )
}

/// The 400 of an FLR of a retention set (`Bflr`) asked of a ZVM other than its repository's: it
/// names the site that can run it. A repository is at its VPGs' recovery site, so this is the
/// same site a journal FLR runs at.
pub fn refusal_bflr_wrong_site(repository: &str, repository_site: &str, this_site: &str) -> String {
    format!(
        "File-level restore from a retention set runs at the site of its repository \
         '{repository}', {repository_site}; this is {this_site}. Send the request to \
         {repository_site}'s ZVM."
    )
}

/// The `CompleteReason` of a mount whose retention set expired before the mount finished.
pub fn reason_retention_set_gone(set: &str) -> String {
    format!("Retention set '{set}' expired before it could be mounted; choose a newer one.")
}

/// The 403 of FLR for a role that may not use it: on ZVM 10.9 the Operator role is refused FLR (a
/// known RBAC defect; the Administrator role works). The text is a ZVM's, not the client's advice.
pub fn refusal_flr_role(user: &str, role: &str) -> String {
    format!("The user '{user}' (role {role}) is not authorized to perform file-level restore.")
}

/// The `CompleteReason` of a mount stopped because its session was unmounted first.
pub fn reason_mount_stopped(session: &str) -> String {
    format!("FLR session '{session}' was unmounted before its mount finished.")
}

/// The `CompleteReason` of a task whose FLR session no longer exists.
pub fn reason_session_gone(session: &str) -> String {
    format!("FLR session '{session}' no longer exists.")
}

/// The `CompleteReason` of a task whose checkpoint left the journal (a resync, or the history
/// window moved past it) before the task could use it.
pub fn reason_checkpoint_lost(vpg_name: &str, checkpoint: u64) -> String {
    format!(
        "Checkpoint {checkpoint} is no longer in the journal of VPG '{vpg_name}' (a resync removed \
         it, or it left the history window); choose a newer checkpoint."
    )
}

/// The `CompleteReason` of a manual Extended Journal Copy run of a VPG without a repository.
pub fn reason_no_repository(vpg_name: &str) -> String {
    format!(
        "VPG '{vpg_name}' has no Extended Journal Copy repository: a retention set cannot be \
         written. Choose a repository in the VPG's Extended Journal Copy settings first."
    )
}

/// The `CompleteReason` of a manual run whose checkpoint the journal does not list (or, with none
/// asked for, of a VPG whose journal lists none).
pub fn reason_retention_checkpoint(vpg_name: &str, checkpoint: Option<&str>) -> String {
    match checkpoint {
        Some(checkpoint) => format!(
            "Checkpoint '{checkpoint}' is not in the journal of VPG '{vpg_name}': choose one of \
             GET /v1/vpgs/{{id}}/checkpoints."
        ),
        None => format!(
            "VPG '{vpg_name}' has no checkpoint in its journal to copy; wait until it writes \
             checkpoints."
        ),
    }
}

/// The `CompleteReason` of a manual run asked for while another runs at the VPG.
pub fn reason_retention_running(vpg_name: &str, running_task: &str) -> String {
    format!(
        "An Extended Journal Copy of VPG '{vpg_name}' is already running (task {running_task}); \
         wait until it ends, or abort it, then start again."
    )
}

/// The `CompleteReason` of an aborted manual run.
pub fn reason_retention_aborted(vpg_name: &str, by: &str) -> String {
    format!("The Extended Journal Copy of VPG '{vpg_name}' was aborted by {by}.")
}

/// An offsite clone of a VM is named like it, with this suffix (`web-01-clone`), and runs at the
/// VPG's recovery site, protected by no VPG.
pub const CLONE_SUFFIX: &str = "-clone";
/// The suffix of a VM restored from a retention set (`POST /v1/ltr/restore/vm`), beside its
/// source, as a clone's (SW10 names no target name).
pub const RESTORED_SUFFIX: &str = "-restored";

/// The `CompleteReason` of a failover test's start task stopped because the test was stopped
/// before it was up.
pub fn reason_test_stopped_while_starting(vpg_name: &str) -> String {
    format!("The failover test of VPG '{vpg_name}' was stopped before it finished starting.")
}

/// The `CompleteReason` of an aborted clone.
pub fn reason_clone_aborted(by: &str) -> String {
    format!("The clone was aborted by {by}.")
}

/// The `CompleteReason` of a journal VM restore rolled back (by a person, or by its commit
/// policy once its wait passed).
pub fn reason_restore_rolled_back(by: &str) -> String {
    format!("The restore was rolled back by {by}.")
}

/// How long a failover or a move waits before commit when its commit policy is Commit or Rollback,
/// before it commits or rolls back by itself: SW10 gives the failover no timeout (and the move's
/// `commitPolicyTimeout` is not modelled), so the hour Zerto's site settings default to.
pub const LIVE_COMMIT_TIMEOUT_SECS: i64 = 3600;

/// The `CompleteReason` of a failover (`kind` Failover) or a move rolled back.
pub fn reason_live_rolled_back(kind: &str, by: &str) -> String {
    format!("The {} was rolled back by {by}.", kind.to_lowercase())
}

/// The `CompleteReason` of a force sync replaced by a resync or a status change.
pub fn reason_sync_interrupted(vpg_name: &str) -> String {
    format!(
        "The force sync of VPG '{vpg_name}' was interrupted by a resync or a status change before \
         it finished."
    )
}

/// A VM's own write load, `(IOPs, ThroughputInMB)`: 1 to 120 IOPS of 8 to 64 KB each, drawn from
/// its identifier (FNV-1a), so that every world keeps the identifiers its seed gives and a VM's load
/// is the same in each of its VPGs and across runs. A VPG shows the sum of its VMs' loads, and none
/// while it writes no checkpoint (a real ZVM reports what its VRAs send to the journal).
pub fn vm_load(vm_identifier: &str) -> (u32, f64) {
    let hash = fnv1a(vm_identifier);
    let iops = 1 + (hash % 120) as u32;
    let kb_per_io = 8 + ((hash >> 16) % 57) as u32;
    (iops, f64::from(iops * kb_per_io) / 1024.0)
}

/// The volumes of every simulated VM (`Volumes[].VmVolumeIdentifier`), and so of each of its
/// replicas.
pub const VM_VOLUMES: [&str; 2] = ["scsi:0:0", "scsi:0:1"];

/// Each site has one datastore, of 64 TiB or, in a larger world, of what it holds and a third
/// more, in whole TiB (`Usage.Datastore.CapacityInBytes`).
pub const DATASTORE_CAPACITY_BYTES: u64 = 64 << 40;

/// A VRA appliance on its datastore: 8 GiB used of 16 provisioned (`Usage.Zerto.Appliances`).
pub const VRA_USED_BYTES: u64 = 8 << 30;
/// See [`VRA_USED_BYTES`].
pub const VRA_PROVISIONED_BYTES: u64 = 16 << 30;

/// FNV-1a of `text`: what the figures the simulator derives from an identifier (a VM's load, a
/// VRA's number) are drawn from, so that they cost no draw from the seed's streams.
pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A VPG's RPO alert is a warning (`VPG0009`) past its target and an error (`VPG0010`) past this
/// many times its target; the real thresholds are not documented.
pub const RPO_ERROR_FACTOR: i64 = 2;

/// A VPG's journal that holds less than this percentage of its configured history raises
/// `VPG0003` (Warning); below [`HISTORY_ERROR_PERCENT`], `VPG0004` (Error) instead. The thresholds
/// are a Zerto cloud partner's account of the alert (AS-75); the simulator judges them on the
/// history the journal holds to the millisecond, and only once the VPG has written checkpoints
/// without a break for its configured history: a journal still filling (after its initial sync or
/// a resync) is no shortfall. The alerts turn off when the history grows back.
pub const HISTORY_WARNING_PERCENT: i64 = 85;
/// See [`HISTORY_WARNING_PERCENT`].
pub const HISTORY_ERROR_PERCENT: i64 = 75;

/// The `UserName` of what the ZVM does of itself (SW10's words for events).
pub const SYSTEM_USER: &str = "System";

/// Events the simulator keeps, and `GET /v1/events` lists the most recent of (the ZVM 7 help:
/// "the last 1000 events").
pub const EVENTS_KEPT: usize = 10_000;
/// See [`EVENTS_KEPT`].
pub const EVENTS_LISTED: usize = 1_000;

/// Recovery reports the simulator keeps.
pub const REPORTS_KEPT: usize = 1_000;
