//! Zerto tasks. A task's state is derived from the simulated clock: State 1 (InProgress) with a
//! Progress that rises with time until its end, then its terminal state. What the task does when
//! it ends is its [`Operation`]; the world carries it out (see `World::end_task`).
//!
//! The world keeps its tasks in [`Tasks`], each under a [`TaskKey`] given when it starts and never
//! changed or reused, so whatever refers to a task (a VPG's running insert, an FLR session, an
//! event still to come) keeps its key while older tasks are forgotten around it.

use std::collections::{BTreeMap, HashMap};
use std::ops::{Index, IndexMut};

use super::clock::SimTime;
use super::ids::SiteRole;
use crate::enums::{task_state, task_type};
use serde::{Deserialize, Serialize};

/// Where the world keeps a task: numbered in the order tasks start, from 0, never reused. It is
/// the simulator's own handle, never shown on the wire (a ZVM shows the task's `<guid>.<siteGuid>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskKey(u64);

impl std::fmt::Display for TaskKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The tasks a ZVM still lists, in the order they started, by key and by identifier.
///
/// A `BTreeMap` keeps the start order for the listings (oldest first) and lets a forgotten task be
/// one removal; a lookup by key or by identifier takes O(log n) and O(1).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tasks {
    /// The key the next task gets.
    next_key: u64,
    /// Every task kept, by key.
    kept: BTreeMap<TaskKey, Task>,
    /// Keys by lowercased task identifier (identifiers are GUIDs, matched case-insensitively).
    /// Built again from `kept` when a saved state is read ([`Tasks::index`]).
    #[serde(skip)]
    by_id: HashMap<String, TaskKey>,
}

impl Tasks {
    /// Keeps a task that just started; its key.
    pub fn add(&mut self, task: Task) -> TaskKey {
        let key = TaskKey(self.next_key);
        self.next_key += 1;
        self.by_id.insert(task.id.to_ascii_lowercase(), key);
        self.kept.insert(key, task);
        key
    }

    /// Forgets a task (a ZVM no longer lists it); nothing else moves.
    pub fn remove(&mut self, key: TaskKey) -> Option<Task> {
        let task = self.kept.remove(&key)?;
        self.by_id.remove(&task.id.to_ascii_lowercase());
        Some(task)
    }

    /// The task of a key, if it is still kept.
    pub fn get(&self, key: TaskKey) -> Option<&Task> {
        self.kept.get(&key)
    }

    /// A task by identifier (case-insensitive).
    pub fn by_id(&self, id: &str) -> Option<&Task> {
        let key = self.by_id.get(&id.to_ascii_lowercase())?;
        self.kept.get(key)
    }

    /// Every task kept, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Task> {
        self.kept.values()
    }

    /// Every task kept with its key, oldest first.
    pub fn keyed(&self) -> impl DoubleEndedIterator<Item = (TaskKey, &Task)> {
        self.kept.iter().map(|(&key, task)| (key, task))
    }

    /// How many tasks are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Indexes tasks read from a saved state by identifier, checking that no two share one and that
    /// every key is below the next one to be given.
    pub fn index(&mut self) -> Result<(), String> {
        self.by_id = HashMap::with_capacity(self.kept.len());
        for (&key, task) in &self.kept {
            if key.0 >= self.next_key {
                return Err(format!(
                    "task {} has the key {key}, and NextKey is {}: the next task would get a key \
                     in use",
                    task.id, self.next_key
                ));
            }
            if self
                .by_id
                .insert(task.id.to_ascii_lowercase(), key)
                .is_some()
            {
                return Err(format!("two tasks have the identifier {}", task.id));
            }
        }
        Ok(())
    }
}

/// The world's own keys: every holder of one is checked against the kept tasks when a saved state
/// is read, and a task is forgotten only when nothing holds its key, so a missing key is a bug.
impl Index<TaskKey> for Tasks {
    type Output = Task;

    fn index(&self, key: TaskKey) -> &Task {
        match self.kept.get(&key) {
            Some(task) => task,
            None => panic!("task key {key} names no kept task"),
        }
    }
}

impl IndexMut<TaskKey> for Tasks {
    fn index_mut(&mut self, key: TaskKey) -> &mut Task {
        match self.kept.get_mut(&key) {
            Some(task) => task,
            None => panic!("task key {key} names no kept task"),
        }
    }
}

/// How a task will end, decided when it starts (and checked again when it ends).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all_fields = "PascalCase")]
pub enum Planned {
    /// It will complete, unless the world changed under it meanwhile.
    Complete,
    /// It will fail with this `CompleteReason`.
    Fail(String),
}

/// What a task does: one variant per kind of write a ZVM runs as a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all_fields = "PascalCase")]
pub enum Operation {
    /// `FailoverCommit` or `MoveCommit`: commits the failover or move of task `of`.
    LiveCommit {
        /// The `FailOver` or `Move` task that waits before commit.
        of: TaskKey,
        /// A failover's (else a move's).
        failover: bool,
    },
    /// `FailoverRollback` or `MoveRollback`: rolls back the failover or move of task `of`.
    LiveRollback {
        /// The `FailOver` or `Move` task that waits before commit.
        of: TaskKey,
        /// A failover's (else a move's).
        failover: bool,
    },
    /// `PauseProtectionGroup`.
    Pause,
    /// `ResumeProtectionGroup`.
    Resume,
    /// `UpdateProtectionGroup`: a VPG's committed settings.
    UpdateVpg {
        /// What changes.
        change: crate::world::payloads::VpgChange,
    },
    /// `CreateProtectionGroup`: a VPG made from a committed settings document.
    CreateVpg {
        /// `VpgName`.
        name: String,
    },
    /// `RemoveProtectionGroup` (`ForceRemoveProtectionGroup` with `Force`).
    DeleteVpg {
        /// How: recovery volumes kept, forced.
        removal: crate::world::payloads::Removal,
    },
    /// `InstallVra`: VRAs installed on hosts (`Task::vra` when one).
    InstallVras {
        /// The hosts (positions in their site's hosts).
        hosts: Vec<usize>,
        /// What the VRAs are configured with.
        settings: crate::world::payloads::VraSettings,
    },
    /// `UninstallVra`: VRAs removed.
    UninstallVras {
        /// The hosts.
        hosts: Vec<usize>,
    },
    /// `EditVra` (the simulator's name: no source lists one): a VRA's new settings.
    EditVra {
        /// What it is configured with from the task's end.
        settings: crate::world::payloads::VraSettings,
    },
    /// `UpgradeVra`: VRAs upgraded to the ZVM's version (which they all run already).
    UpgradeVras {
        /// The hosts.
        hosts: Vec<usize>,
    },
    /// `ChangeRecoveryHost`: VMs recover on other hosts from the task's end.
    ChangeRecoveryHost {
        /// Each VM (a position in `World::vms`) and its new recovery host.
        moves: Vec<(usize, usize)>,
    },
    /// `RestoreVmFromRetentionSet` (the simulator's name): a VM restored from a retention set.
    RestoreFromRetentionSet {
        /// The retention set's identifier.
        set: String,
        /// The VM restored (its source).
        vm: usize,
    },
    /// `InsertTaggedCP`: a tagged checkpoint with this name.
    InsertTaggedCheckpoint {
        /// The tag.
        name: String,
    },
    /// `FlrJournalMount`: mounts an FLR session's checkpoint.
    FlrMount {
        /// The FLR session identifier.
        session: String,
    },
    /// `FlrJournalUnmount`: unmounts an FLR session.
    FlrUnmount {
        /// The FLR session identifier.
        session: String,
    },
    /// `FailOverTest`: brings up test copies of VMs at a checkpoint.
    FailoverTest {
        /// The checkpoint tested.
        checkpoint: u64,
        /// The VMs tested (positions in `World::vms`).
        vms: Vec<usize>,
    },
    /// `StopFailOverTest`: ends the VPG's failover test.
    StopFailoverTest {
        /// `FailoverTestSuccess`.
        success: bool,
        /// `FailoverTestSummary`.
        summary: String,
    },
    /// `Clone`: an offsite clone of VMs at a checkpoint, made at the recovery site.
    Clone {
        /// The checkpoint cloned.
        checkpoint: u64,
        /// The VMs cloned.
        vms: Vec<usize>,
    },
    /// `FailOver`: a live failover (never a rewind tool; here for fidelity).
    Failover {
        /// The checkpoint failed over to.
        checkpoint: u64,
        /// The VMs failed over.
        vms: Vec<usize>,
        /// `CommitPolicy`.
        commit_policy: u8,
    },
    /// `Move`: a planned migration (never a rewind tool; here for fidelity).
    Move {
        /// `CommitPolicy`.
        commit_policy: u8,
    },
    /// `FlrBackupMount`: mounts an FLR session's retention set.
    FlrBackupMount {
        /// The FLR session identifier.
        session: String,
    },
    /// `FlrBackupUnmount`: unmounts an FLR session of a retention set.
    FlrBackupUnmount {
        /// The FLR session identifier.
        session: String,
    },
    /// `ManualRetention`: an Extended Journal Copy run that writes a full retention set of the
    /// VPG at a checkpoint.
    ManualRetention {
        /// The checkpoint copied; `None` for a run refused when it was asked for.
        checkpoint: Option<u64>,
    },
    /// `JournalVmRestore`: rewinds a VM to a checkpoint (in place, or as a new VM), then waits for
    /// a commit or a rollback.
    JournalVmRestore {
        /// The VM restored.
        vm: usize,
        /// The checkpoint restored.
        checkpoint: u64,
    },
    /// `JournalVmRestoreCommit`: keeps what a restore restored.
    JournalVmRestoreCommit {
        /// The VM restored.
        vm: usize,
    },
    /// `JournalVmRestoreRollback`: undoes what a restore restored.
    JournalVmRestoreRollback {
        /// The VM restored.
        vm: usize,
    },
    /// `ForceSync`: a sync that keeps the journal's checkpoints.
    ForceSync {
        /// The VPG's generation the sync set; a later resync or status pin interrupts it.
        generation: u64,
    },
}

impl Operation {
    /// The task's `Type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Operation::InsertTaggedCheckpoint { .. } => task_type::INSERT_TAGGED_CP,
            Operation::FlrMount { .. } => task_type::FLR_JOURNAL_MOUNT,
            Operation::FlrUnmount { .. } => task_type::FLR_JOURNAL_UNMOUNT,
            Operation::FailoverTest { .. } => task_type::FAIL_OVER_TEST,
            Operation::StopFailoverTest { .. } => task_type::STOP_FAIL_OVER_TEST,
            Operation::Clone { .. } => task_type::CLONE,
            Operation::Failover { .. } => task_type::FAIL_OVER,
            Operation::Move { .. } => task_type::MOVE,
            Operation::ForceSync { .. } => task_type::FORCE_SYNC,
            Operation::UpdateVpg { .. } => task_type::UPDATE_PROTECTION_GROUP,
            Operation::Pause => task_type::PAUSE_PROTECTION_GROUP,
            Operation::InstallVras { .. } => task_type::INSTALL_VRA,
            Operation::RestoreFromRetentionSet { .. } => task_type::RESTORE_FROM_RETENTION_SET,
            Operation::UninstallVras { .. } => task_type::UNINSTALL_VRA,
            Operation::EditVra { .. } => task_type::EDIT_VRA,
            Operation::UpgradeVras { .. } => task_type::UPGRADE_VRA,
            Operation::ChangeRecoveryHost { .. } => task_type::CHANGE_RECOVERY_HOST,
            Operation::CreateVpg { .. } => task_type::CREATE_PROTECTION_GROUP,
            Operation::DeleteVpg { removal } if removal.force => {
                task_type::FORCE_REMOVE_PROTECTION_GROUP
            }
            Operation::DeleteVpg { .. } => task_type::REMOVE_PROTECTION_GROUP,
            Operation::LiveCommit { failover: true, .. } => task_type::FAILOVER_COMMIT,
            Operation::LiveCommit { .. } => task_type::MOVE_COMMIT,
            Operation::LiveRollback { failover: true, .. } => task_type::FAILOVER_ROLLBACK,
            Operation::LiveRollback { .. } => task_type::MOVE_ROLLBACK,
            Operation::Resume => task_type::RESUME_PROTECTION_GROUP,
            Operation::FlrBackupMount { .. } => task_type::FLR_BACKUP_MOUNT,
            Operation::FlrBackupUnmount { .. } => task_type::FLR_BACKUP_UNMOUNT,
            Operation::ManualRetention { .. } => task_type::MANUAL_RETENTION,
            Operation::JournalVmRestore { .. } => task_type::JOURNAL_VM_RESTORE,
            Operation::JournalVmRestoreCommit { .. } => task_type::JOURNAL_VM_RESTORE_COMMIT,
            Operation::JournalVmRestoreRollback { .. } => task_type::JOURNAL_VM_RESTORE_ROLLBACK,
        }
    }

    /// The VMs a recovery operation acts on (positions in `World::vms`); empty for the others.
    pub fn vms(&self) -> &[usize] {
        match self {
            Operation::FailoverTest { vms, .. }
            | Operation::Clone { vms, .. }
            | Operation::Failover { vms, .. } => vms,
            Operation::JournalVmRestore { vm, .. }
            | Operation::RestoreFromRetentionSet { vm, .. }
            | Operation::JournalVmRestoreCommit { vm }
            | Operation::JournalVmRestoreRollback { vm } => std::slice::from_ref(vm),
            _ => &[],
        }
    }

    /// The FLR session the task acts on, if any.
    pub fn flr_session(&self) -> Option<&str> {
        match self {
            Operation::FlrMount { session }
            | Operation::FlrUnmount { session }
            | Operation::FlrBackupMount { session }
            | Operation::FlrBackupUnmount { session } => Some(session),
            _ => None,
        }
    }
}

/// The terminal state of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Ended {
    /// 4 Failed, 5 Stopped or 6 Completed.
    pub state: u8,
    /// `CompleteReason`: empty on success.
    pub reason: String,
    /// `Completed`.
    pub at: SimTime,
    /// `Progress` as it stays.
    pub progress: u8,
}

/// One Zerto task.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Task {
    /// `<guid>.<siteGuid>`.
    pub id: String,
    /// The site whose ZVM received the request and runs the task.
    pub site: SiteRole,
    /// What it does.
    pub operation: Operation,
    /// The VPG it acts on; `None` for a VRA's task.
    pub vpg: Option<usize>,
    /// The host whose VRA it acts on, for a VRA's task.
    #[serde(default)]
    pub vra: Option<usize>,
    /// `InitiatedBy`: the user, or a client's service account.
    pub initiated_by: String,
    /// `Started`.
    pub started: SimTime,
    /// When it would end had it run its whole duration (Progress is measured against this).
    pub nominal_end: SimTime,
    /// What it will do at its end.
    pub planned: Planned,
    /// Set when the world reaches its end (or when it is stopped).
    pub ended: Option<Ended>,
    /// When it began to wait for a person (`WaitingForUserInput`): a restore done, not yet
    /// committed or rolled back.
    #[serde(default)]
    pub waiting: Option<SimTime>,
}

impl Task {
    /// The VPG of a VPG operation's task: every operation but a VRA's names one.
    pub fn on_vpg(&self) -> usize {
        self.vpg.expect("a VPG operation's task names its VPG")
    }

    /// `Type`.
    pub fn kind(&self) -> &'static str {
        self.operation.kind()
    }

    /// The tag of an insert; empty for other tasks.
    pub fn checkpoint_name(&self) -> &str {
        match &self.operation {
            Operation::InsertTaggedCheckpoint { name } => name,
            _ => "",
        }
    }

    /// Whether the task has not ended.
    pub fn is_running(&self) -> bool {
        self.ended.is_none()
    }

    /// `Status.State` and `Status.Progress` at `now`.
    pub fn status_at(&self, now: SimTime) -> (u8, u8) {
        match &self.ended {
            Some(ended) => (ended.state, ended.progress),
            None if self.waiting.is_some() => (task_state::WAITING_FOR_USER_INPUT, 100),
            None => (task_state::IN_PROGRESS, self.progress_at(now).min(99)),
        }
    }

    /// The share of its nominal duration that has passed at `at`, 0..=100.
    pub fn progress_at(&self, at: SimTime) -> u8 {
        let total = self.nominal_end.millis_since(self.started);
        if total <= 0 {
            return 100;
        }
        let done = at.millis_since(self.started).clamp(0, total);
        u8::try_from(done * 100 / total).unwrap_or(100)
    }

    /// Waits for a person from `at` on: `WaitingForUserInput`, not ended.
    pub fn wait(&mut self, at: SimTime) {
        if self.ended.is_none() {
            self.waiting = Some(at);
        }
    }

    /// Ends the task at `at` (a task ends once; later calls change nothing).
    pub fn end(&mut self, state: u8, reason: String, at: SimTime) {
        if self.ended.is_some() {
            return;
        }
        let progress = if state == task_state::COMPLETED {
            100
        } else {
            self.progress_at(at)
        };
        self.ended = Some(Ended {
            state,
            reason,
            at,
            progress,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> Task {
        Task {
            id: "t".to_owned(),
            site: SiteRole::Local,
            operation: Operation::InsertTaggedCheckpoint {
                name: "tag".to_owned(),
            },
            vpg: Some(0),
            vra: None,
            initiated_by: "admin".to_owned(),
            started: SimTime::from_millis(0),
            nominal_end: SimTime::from_millis(1000),
            planned: Planned::Complete,
            ended: None,
            waiting: None,
        }
    }

    fn ms(millis: i64) -> SimTime {
        SimTime::from_millis(millis)
    }

    #[test]
    fn progress_rises_while_running_and_is_100_when_completed() {
        let mut t = task();
        assert_eq!(t.status_at(ms(0)), (1, 0));
        assert_eq!(t.status_at(ms(500)), (1, 50));
        assert_eq!(t.status_at(ms(5000)), (1, 99));
        t.end(task_state::COMPLETED, String::new(), ms(1000));
        assert_eq!(t.status_at(ms(5000)), (6, 100));
    }

    #[test]
    fn a_failed_task_keeps_the_progress_it_reached() {
        let mut t = task();
        t.end(task_state::FAILED, "no".to_owned(), ms(100));
        assert_eq!(t.status_at(ms(5000)), (4, 10));
    }

    #[test]
    fn a_task_ends_only_once() {
        let mut t = task();
        t.end(task_state::STOPPED, "stopped".to_owned(), ms(200));
        t.end(task_state::COMPLETED, String::new(), ms(1000));
        assert_eq!(t.status_at(ms(5000)), (5, 20));
        assert_eq!(t.kind(), "InsertTaggedCP");
        assert_eq!(t.checkpoint_name(), "tag");
    }
}
