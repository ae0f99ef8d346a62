//! The `/_sim` control API's views filled from the world: a task with what its operation carries,
//! and a retention set with its VPG, repository and VMs.

use crate::wire::sim::{SimRetentionSetView, SimTaskView};
use crate::world::World;
use crate::world::clock::SimTime;
use crate::world::tasks::{Operation, Task};

/// A retention set as `GET /_sim/retention-sets` shows it.
pub fn sim_retention_set(
    world: &World,
    set: &crate::world::ltr::RetentionSet,
) -> SimRetentionSetView {
    let vpg = &world.vpgs[set.vpg];
    let repository = &world.ltr.repositories[set.repository];
    SimRetentionSetView {
        retention_set_identifier: set.id.clone(),
        vpg_identifier: vpg.id.clone(),
        vpg_name: vpg.name.clone(),
        repository_identifier: repository.id.clone(),
        repository_name: repository.name.clone(),
        site: world.site(repository.site).name.clone(),
        checkpoint_identifier: set.checkpoint.id.to_string(),
        tag: set.checkpoint.tag.clone(),
        point_in_time: set.checkpoint.at,
        written: set.written,
        expiry_date: set.expires,
        vm_identifiers: set.vms.iter().map(|&vm| world.vms[vm].id.clone()).collect(),
        initiated_by: set.initiated_by.clone(),
    }
}

/// A task as `GET /_sim/tasks` shows it.
pub fn sim_task(world: &World, task: &Task, now: SimTime) -> SimTaskView {
    let (state, progress) = task.status_at(now);
    let vpg = task.vpg.map(|v| &world.vpgs[v]);
    SimTaskView {
        site: world.site(task.site).name.clone(),
        task_identifier: task.id.clone(),
        kind: task.kind(),
        vpg_identifier: vpg.map(|v| v.id.clone()).unwrap_or_default(),
        vpg_name: vpg.map(|v| v.name.clone()).unwrap_or_default(),
        checkpoint_name: task.checkpoint_name().to_owned(),
        state,
        progress,
        complete_reason: task
            .ended
            .as_ref()
            .map(|e| e.reason.clone())
            .unwrap_or_default(),
        started: task.started,
        completed: task.ended.as_ref().map(|e| e.at),
        details: task_details(world, &task.operation),
    }
}

fn task_details(world: &World, operation: &Operation) -> serde_json::Value {
    use serde_json::json;
    let vms: Vec<&str> = operation
        .vms()
        .iter()
        .map(|&vm| world.vms[vm].id.as_str())
        .collect();
    match operation {
        Operation::InsertTaggedCheckpoint { name } => json!({ "CheckpointName": name }),
        Operation::FlrMount { session }
        | Operation::FlrUnmount { session }
        | Operation::FlrBackupMount { session }
        | Operation::FlrBackupUnmount { session } => {
            json!({ "FlrSessionIdentifier": session })
        }
        Operation::ManualRetention { checkpoint } => {
            json!({ "CheckpointIdentifier": checkpoint.map(|c| c.to_string()) })
        }
        Operation::FailoverTest { checkpoint, .. } | Operation::Clone { checkpoint, .. } => {
            json!({ "CheckpointIdentifier": checkpoint.to_string(), "VmIdentifiers": vms })
        }
        Operation::Failover {
            checkpoint,
            commit_policy,
            ..
        } => json!({
            "CheckpointIdentifier": checkpoint.to_string(),
            "VmIdentifiers": vms,
            "CommitPolicy": commit_policy,
        }),
        Operation::StopFailoverTest { success, summary } => json!({
            "FailoverTestSuccess": success,
            "FailoverTestSummary": summary,
        }),
        Operation::Move { commit_policy } => json!({ "CommitPolicy": commit_policy }),
        Operation::ForceSync { .. }
        | Operation::Pause
        | Operation::Resume
        | Operation::LiveCommit { .. }
        | Operation::LiveRollback { .. } => json!({}),
        Operation::UpdateVpg { change } => json!({ "VpgName": change.name }),
        Operation::CreateVpg { name } => json!({ "VpgName": name }),
        Operation::InstallVras { hosts, settings } => json!({
            "Hosts": hosts.len(), "MemoryInGB": settings.memory_gb, "VraGroup": settings.group,
        }),
        Operation::UninstallVras { hosts } | Operation::UpgradeVras { hosts } => {
            json!({ "Hosts": hosts.len() })
        }
        Operation::EditVra { settings } => json!({
            "MemoryInGB": settings.memory_gb, "NumOfCpus": settings.cpus, "VraGroup": settings.group,
        }),
        Operation::ChangeRecoveryHost { moves } => json!({ "Vms": moves.len() }),
        Operation::RestoreFromRetentionSet { set, .. } => {
            json!({ "RetentionSetIdentifier": set, "VmIdentifiers": vms })
        }
        Operation::DeleteVpg { removal } => json!({
            "KeepRecoveryVolumes": removal.keep_recovery_volumes,
            "Force": removal.force,
        }),
        Operation::JournalVmRestore { checkpoint, .. } => {
            json!({ "CheckpointIdentifier": checkpoint.to_string(), "VmIdentifiers": vms })
        }
        Operation::JournalVmRestoreCommit { .. } | Operation::JournalVmRestoreRollback { .. } => {
            json!({ "VmIdentifiers": vms })
        }
    }
}
