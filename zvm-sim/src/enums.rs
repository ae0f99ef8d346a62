//! The ZVM's enumerations, with their real numbers (`zvm-api.md` §3), and one parser that takes a
//! number or a name, case-insensitively, as ASP.NET binds them.

/// One enumeration: its values are the positions of `names`.
#[derive(Debug, Clone, Copy)]
pub struct EnumTable {
    /// What the values are, for messages ("VPG status").
    pub what: &'static str,
    /// The names, in the order of their numbers.
    pub names: &'static [&'static str],
}

/// A value that is neither a number of the enumeration nor one of its names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{value}' is not a {what}: use a number from 0 to {max} or one of the names {names}")]
pub struct EnumError {
    /// The value as it was given.
    pub value: String,
    /// What was expected.
    pub what: &'static str,
    /// The largest number.
    pub max: usize,
    /// Every name, comma-separated.
    pub names: String,
}

impl EnumTable {
    /// The name of a value ("Unknown" outside the table).
    pub fn name(&self, value: u8) -> &'static str {
        self.names
            .get(usize::from(value))
            .copied()
            .unwrap_or("Unknown")
    }

    /// Parses a number or a name; names are matched case-insensitively.
    pub fn parse(&self, raw: &str) -> Result<u8, EnumError> {
        let value = raw.trim();
        let position = match value.parse::<usize>() {
            Ok(number) => (number < self.names.len()).then_some(number),
            Err(_) => self
                .names
                .iter()
                .position(|name| name.eq_ignore_ascii_case(value)),
        };
        position
            .and_then(|p| u8::try_from(p).ok())
            .ok_or_else(|| EnumError {
                value: raw.to_owned(),
                what: self.what,
                max: self.names.len().saturating_sub(1),
                names: self.names.join(", "),
            })
    }
}

/// `VpgVisualStatusApi`, 0..8.
pub const VPG_STATUS: EnumTable = EnumTable {
    what: "VPG status",
    names: &[
        "Initializing",
        "MeetingSLA",
        "NotMeetingSLA",
        "RpoNotMeetingSLA",
        "HistoryNotMeetingSLA",
        "FailingOver",
        "Moving",
        "Deleting",
        "Recovered",
    ],
};

/// `VpgVisualSubStatusApi`, the 33 values whose names are known (0..32).
pub const VPG_SUBSTATUS: EnumTable = EnumTable {
    what: "VPG substatus",
    names: &[
        "None",
        "InitialSync",
        "Creating",
        "VolumeInitialSync",
        "Sync",
        "RecoveryPossible",
        "DeltaSync",
        "NeedsConfiguration",
        "Error",
        "EmptyProtectionGroup",
        "DisconnectedFromPeerNoRecoveryPoints",
        "FullSync",
        "VolumeDeltaSync",
        "VolumeFullSync",
        "FailingOverCommitting",
        "FailingOverBeforeCommit",
        "FailingOverRollingBack",
        "Promoting",
        "MovingCommitting",
        "MovingBeforeCommit",
        "MovingRollingBack",
        "Deleting",
        "PendingRemove",
        "BitmapSync",
        "DisconnectedFromPeer",
        "ReplicationPausedUserInitiated",
        "ReplicationPausedSystemInitiated",
        "RecoveryStorageProfileError",
        "Backup",
        "RollingBack",
        "RecoveryStorageError",
        "JournalStorageError",
        "VmNotProtectedError",
    ],
};

/// `TaskStatusEnumApi`, 0..7.
pub const TASK_STATE: EnumTable = EnumTable {
    what: "task status",
    names: &[
        "FirstUnusedValue",
        "InProgress",
        "WaitingForUserInput",
        "Paused",
        "Failed",
        "Stopped",
        "Completed",
        "Cancelling",
    ],
};

/// Task types. The API carries them as strings; their numbers are unknown, so a number given in a
/// filter is read as a position in this list (the simulator's own order).
pub const TASK_TYPE: EnumTable = EnumTable {
    what: "task type",
    names: &[
        "CreateProtectionGroup",
        "RemoveProtectionGroup",
        "FailOver",
        "FailOverTest",
        "StopFailOverTest",
        "Move",
        "GetCheckpointList",
        "ProtectVM",
        "UnprotectVM",
        "AddVMToProtectionGroup",
        "RemoveVMFromProtectionGroup",
        "InstallVra",
        "UninstallVra",
        "UpdateProtectionGroup",
        "InsertTaggedCP",
        "WaitForCP",
        "ClearCheckpoints",
        "ForceRemoveProtectionGroup",
        "InitFullSync",
        "Pair",
        "Unpair",
        "Clone",
        "MoveBeforeCommit",
        "MoveRollback",
        "MoveCommit",
        "UpgradeVra",
        "FailoverBeforeCommit",
        "FailoverCommit",
        "FailoverRollback",
        "PauseProtectionGroup",
        "ResumeProtectionGroup",
        "ChangeRecoveryHost",
        "FlrJournalMount",
        "FlrJournalUnmount",
        "ForceSync",
        "ManualRetention",
        "FlrBackupMount",
        "FlrBackupUnmount",
        "JournalVmRestore",
        "JournalVmRestoreCommit",
        "JournalVmRestoreRollback",
        "EditVra",
        "RestoreVmFromRetentionSet",
    ],
};

/// `VpgPriorityApi`, 0..2.
pub const PRIORITY: EnumTable = EnumTable {
    what: "VPG priority",
    names: &["Low", "Medium", "High"],
};

/// Failover commit policy, 0..2 (names as the official PowerShell module sends them).
pub const COMMIT_POLICY: EnumTable = EnumTable {
    what: "commit policy",
    names: &["Rollback", "Commit", "None"],
};

/// Failover shutdown policy, 0..2.
pub const SHUTDOWN_POLICY: EnumTable = EnumTable {
    what: "shutdown policy",
    names: &["None", "GracefulShutdown", "ForceShutdown"],
};

/// VPG entity type, 0..4 (SW10 names none; these are the ZVM 9 API's `VpgEntityType`).
pub const VPG_ENTITY_TYPE: EnumTable = EnumTable {
    what: "VPG entity type",
    names: &["VCVpg", "VCvApp", "VCDvApp", "PublicCloud", "HyperV"],
};

/// VPG retention policy, 0..1 (SW10 names none; the ZVM 9 API's `RetentionPolicy`).
pub const RETENTION_POLICY: EnumTable = EnumTable {
    what: "retention policy",
    names: &["Standard", "Backup"],
};

/// Peer-site pairing status, 0..2 (names as the ZVM UI has them).
pub const PAIRING_STATUS: EnumTable = EnumTable {
    what: "pairing status",
    names: &["Paired", "Pairing", "Unpaired"],
};

/// `EventTypeApi`, 0..60 as ZVM 7 documented them (SW10 declares 0..120 without names).
pub const EVENT_TYPE: EnumTable = EnumTable {
    what: "event type",
    names: &[
        "Unknown",
        "CreateProtectionGroup",
        "RemoveProtectionGroup",
        "FailOver",
        "FailOverTest",
        "StopFailOverTest",
        "Move",
        "ProtectVM",
        "UnprotectVM",
        "InstallVra",
        "UninstallVra",
        "UpdateProtectionGroup",
        "InsertTaggedCP",
        "HandleMirrorPromotion",
        "ActivateAllMirrors",
        "LogCollection",
        "ForceReconfigurationOfNewVM",
        "ClearSite",
        "ForceRemoveProtectionGroup",
        "ForceUpdateProtectionGroup",
        "ForceKillProtectionGroup",
        "PrePostScript",
        "InitFullSync",
        "Pair",
        "Unpair",
        "InstallCloudConnector",
        "UninstallCloudConnector",
        "RedeployCloudConnector",
        "ScriptExecutionFailure",
        "SetAdvancedSiteSettings",
        "Clone",
        "KeepDisk",
        "FailoverBeforeCommit",
        "FailoverCommit",
        "FailoverRollback",
        "MoveBeforeCommit",
        "MoveRollback",
        "MoveCommit",
        "MaintainHost",
        "UpgradeVra",
        "MoveProtectionGroupToManualOperationNeeded",
        "ChangeVraIpSettings",
        "PauseProtectionGroup",
        "ResumeProtectionGroup",
        "UpgradeZVM",
        "BulkUpgradeVras",
        "BulkUninstallVras",
        "AlertTurnedOn",
        "AlertTurnedOff",
        "ChangeVraPassword",
        "ChangeRecoveryHost",
        "BackupProtectionGroup",
        "CleanupProtectionGroupVipDiskbox",
        "RestoreProtectionGroup",
        "PreScript",
        "PostScript",
        "RemoveVmFromVc",
        "ChangeVraPasswordIpSettings",
        "FlrJournalMount",
        "FlrJournalUnmount",
        "Login",
    ],
};

/// `EventEntityTypeApi`, 0..3.
pub const EVENT_ENTITY: EnumTable = EnumTable {
    what: "event entity type",
    names: &["VPG", "VRA", "Unknown", "Site"],
};

/// The event categories a filter takes, 0..2.
pub const EVENT_CATEGORY: EnumTable = EnumTable {
    what: "event category",
    names: &["All", "Events", "Alerts"],
};

/// Alert levels (alerts carry the name).
pub const ALERT_LEVEL: EnumTable = EnumTable {
    what: "alert level",
    names: &["Warning", "Error"],
};

/// Alert entities (alerts carry the name).
pub const ALERT_ENTITY: EnumTable = EnumTable {
    what: "alert entity",
    names: &[
        "Zvm",
        "Vra",
        "Vpg",
        "CloudConnector",
        "Storage",
        "License",
        "Zcm",
        "FileRecoveryComponent",
    ],
};

/// Event types the simulator records, by name.
pub mod event_type {
    /// 3
    pub const FAIL_OVER: u8 = 3;
    /// 4
    pub const FAIL_OVER_TEST: u8 = 4;
    /// 5
    pub const STOP_FAIL_OVER_TEST: u8 = 5;
    /// 6
    pub const MOVE: u8 = 6;
    /// 12
    pub const INSERT_TAGGED_CP: u8 = 12;
    /// `CreateProtectionGroup`.
    pub const CREATE_PROTECTION_GROUP: u8 = 1;
    /// `RemoveProtectionGroup`.
    pub const REMOVE_PROTECTION_GROUP: u8 = 2;
    /// `ForceRemoveProtectionGroup`.
    pub const FORCE_REMOVE_PROTECTION_GROUP: u8 = 18;
    /// `UpdateProtectionGroup`.
    pub const UPDATE_PROTECTION_GROUP: u8 = 11;
    /// `PauseProtectionGroup`.
    pub const PAUSE_PROTECTION_GROUP: u8 = 42;
    /// `ResumeProtectionGroup`.
    pub const RESUME_PROTECTION_GROUP: u8 = 43;
    /// `FailoverCommit`.
    pub const FAILOVER_COMMIT: u8 = 33;
    /// `FailoverRollback`.
    pub const FAILOVER_ROLLBACK: u8 = 34;
    /// `MoveRollback`.
    pub const MOVE_ROLLBACK: u8 = 36;
    /// `MoveCommit`.
    pub const MOVE_COMMIT: u8 = 37;
    /// 22: the event of a sync that started from scratch; the simulator's resync leaves it.
    pub const INIT_FULL_SYNC: u8 = 22;
    /// 30
    pub const CLONE: u8 = 30;
    /// 51: the old Backup feature's event, which Extended Journal Copy (long-term retention)
    /// replaced; the simulator's manual retention runs leave it.
    pub const BACKUP_PROTECTION_GROUP: u8 = 51;
    /// 47
    pub const ALERT_TURNED_ON: u8 = 47;
    /// 48
    pub const ALERT_TURNED_OFF: u8 = 48;
    /// 53: the simulator's event of a journal VM restore, its commit and its rollback (no source
    /// names one; this is the nearest of ZVM 7's list).
    pub const RESTORE_PROTECTION_GROUP: u8 = 53;
    /// 58
    pub const FLR_JOURNAL_MOUNT: u8 = 58;
    /// 59
    pub const FLR_JOURNAL_UNMOUNT: u8 = 59;
}

/// VPG status numbers the simulator refers to by name.
pub mod status {
    /// 0: the VPG is being created and has no journal yet.
    pub const INITIALIZING: u8 = 0;
    /// 1
    pub const MEETING_SLA: u8 = 1;
    /// 2: both history and RPO are not met.
    pub const NOT_MEETING_SLA: u8 = 2;
    /// 3
    pub const RPO_NOT_MEETING_SLA: u8 = 3;
    /// 4
    pub const HISTORY_NOT_MEETING_SLA: u8 = 4;
    /// 5
    pub const FAILING_OVER: u8 = 5;
    /// 6
    pub const MOVING: u8 = 6;
    /// 7: a `RemoveProtectionGroup` task runs.
    pub const DELETING: u8 = 7;
    /// 8: a failover or move committed; the VPG no longer replicates.
    pub const RECOVERED: u8 = 8;
}

/// VPG substatus numbers the simulator refers to by name.
pub mod substatus {
    /// 0
    pub const NONE: u8 = 0;
    /// 1
    pub const INITIAL_SYNC: u8 = 1;
    /// 3
    pub const VOLUME_INITIAL_SYNC: u8 = 3;
    /// 4
    pub const SYNC: u8 = 4;
    /// 6
    pub const DELTA_SYNC: u8 = 6;
    /// 11
    pub const FULL_SYNC: u8 = 11;
    /// 12
    pub const VOLUME_DELTA_SYNC: u8 = 12;
    /// 13
    pub const VOLUME_FULL_SYNC: u8 = 13;
    /// 14
    pub const FAILING_OVER_COMMITTING: u8 = 14;
    /// 15
    pub const FAILING_OVER_BEFORE_COMMIT: u8 = 15;
    /// 16
    pub const FAILING_OVER_ROLLING_BACK: u8 = 16;
    /// 18
    pub const MOVING_COMMITTING: u8 = 18;
    /// 19
    pub const MOVING_BEFORE_COMMIT: u8 = 19;
    /// 20
    pub const MOVING_ROLLING_BACK: u8 = 20;
    /// 23
    pub const BITMAP_SYNC: u8 = 23;
    /// 25
    pub const REPLICATION_PAUSED_USER_INITIATED: u8 = 25;
}

/// Task state numbers.
pub mod task_state {
    /// 1
    pub const IN_PROGRESS: u8 = 1;
    /// 2: done its part, waiting for a person (a journal VM restore before its commit).
    pub const WAITING_FOR_USER_INPUT: u8 = 2;
    /// 4 (terminal)
    pub const FAILED: u8 = 4;
    /// 5 (terminal)
    pub const STOPPED: u8 = 5;
    /// 6 (terminal)
    pub const COMPLETED: u8 = 6;
}

/// The task types the simulator runs (names from `TASK_TYPE`).
pub mod task_type {
    /// A tagged checkpoint insert.
    pub const INSERT_TAGGED_CP: &str = "InsertTaggedCP";
    /// An FLR session's mount.
    pub const FLR_JOURNAL_MOUNT: &str = "FlrJournalMount";
    /// An FLR session's unmount.
    pub const FLR_JOURNAL_UNMOUNT: &str = "FlrJournalUnmount";
    /// A failover test's start.
    pub const FAIL_OVER_TEST: &str = "FailOverTest";
    /// A failover test's stop.
    pub const STOP_FAIL_OVER_TEST: &str = "StopFailOverTest";
    /// An offsite clone.
    pub const CLONE: &str = "Clone";
    /// A live failover.
    pub const FAIL_OVER: &str = "FailOver";
    /// A move.
    pub const MOVE: &str = "Move";
    /// A VM restored from a retention set (the simulator's name: no source lists this task type).
    pub const RESTORE_FROM_RETENTION_SET: &str = "RestoreVmFromRetentionSet";
    /// A VRA's install.
    pub const INSTALL_VRA: &str = "InstallVra";
    /// A VRA's removal.
    pub const UNINSTALL_VRA: &str = "UninstallVra";
    /// A VRA's new settings (the simulator's name: no source lists this task type).
    pub const EDIT_VRA: &str = "EditVra";
    /// A VRA's upgrade.
    pub const UPGRADE_VRA: &str = "UpgradeVra";
    /// VMs moved to another recovery host.
    pub const CHANGE_RECOVERY_HOST: &str = "ChangeRecoveryHost";
    /// A VPG created from a committed settings document.
    pub const CREATE_PROTECTION_GROUP: &str = "CreateProtectionGroup";
    /// A VPG's removal.
    pub const REMOVE_PROTECTION_GROUP: &str = "RemoveProtectionGroup";
    /// A VPG's removal with `Force`.
    pub const FORCE_REMOVE_PROTECTION_GROUP: &str = "ForceRemoveProtectionGroup";
    /// A VPG's committed settings.
    pub const UPDATE_PROTECTION_GROUP: &str = "UpdateProtectionGroup";
    /// A VPG's replication paused by a person.
    pub const PAUSE_PROTECTION_GROUP: &str = "PauseProtectionGroup";
    /// A paused VPG's replication resumed.
    pub const RESUME_PROTECTION_GROUP: &str = "ResumeProtectionGroup";
    /// A failover's commit.
    pub const FAILOVER_COMMIT: &str = "FailoverCommit";
    /// A failover's rollback.
    pub const FAILOVER_ROLLBACK: &str = "FailoverRollback";
    /// A move's commit.
    pub const MOVE_COMMIT: &str = "MoveCommit";
    /// A move's rollback.
    pub const MOVE_ROLLBACK: &str = "MoveRollback";
    /// A force sync (the name is the simulator's: no source lists this task type).
    pub const FORCE_SYNC: &str = "ForceSync";
    /// A manual Extended Journal Copy run (the simulator's name, after SW10's "Start the Manual
    /// Retention process": no source lists the task types of Extended Journal Copy).
    pub const MANUAL_RETENTION: &str = "ManualRetention";
    /// A journal VM restore (the simulator's name: no source lists the task types of
    /// `POST /v1/vms/{id}/Restore`).
    pub const JOURNAL_VM_RESTORE: &str = "JournalVmRestore";
    /// A journal VM restore's commit (the simulator's name).
    pub const JOURNAL_VM_RESTORE_COMMIT: &str = "JournalVmRestoreCommit";
    /// A journal VM restore's rollback (the simulator's name).
    pub const JOURNAL_VM_RESTORE_ROLLBACK: &str = "JournalVmRestoreRollback";
    /// An FLR session's mount of a retention set (`Bflr`; the simulator's name).
    pub const FLR_BACKUP_MOUNT: &str = "FlrBackupMount";
    /// An FLR session's unmount of a retention set (the simulator's name).
    pub const FLR_BACKUP_UNMOUNT: &str = "FlrBackupUnmount";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_takes_numbers_and_names_in_any_case() {
        assert_eq!(VPG_STATUS.parse("1"), Ok(1));
        assert_eq!(VPG_STATUS.parse("meetingsla"), Ok(1));
        assert_eq!(VPG_STATUS.parse("RPONOTMEETINGSLA"), Ok(3));
        assert_eq!(VPG_SUBSTATUS.parse("DeltaSync"), Ok(substatus::DELTA_SYNC));
        assert_eq!(TASK_STATE.parse("completed"), Ok(task_state::COMPLETED));
    }

    #[test]
    fn parse_refuses_out_of_range_numbers_and_unknown_names() {
        let error = VPG_STATUS.parse("9").unwrap_err();
        assert!(error.to_string().contains("from 0 to 8"), "{error}");
        let error = VPG_STATUS.parse("Healthy").unwrap_err();
        assert!(
            error.to_string().contains("'Healthy' is not a VPG status"),
            "{error}"
        );
        assert!(VPG_STATUS.parse("-1").is_err());
    }

    #[test]
    fn the_real_numbers_hold() {
        assert_eq!(VPG_STATUS.name(3), "RpoNotMeetingSLA");
        assert_eq!(VPG_STATUS.name(4), "HistoryNotMeetingSLA");
        assert_eq!(VPG_SUBSTATUS.name(23), "BitmapSync");
        assert_eq!(VPG_SUBSTATUS.name(32), "VmNotProtectedError");
        assert_eq!(TASK_STATE.name(4), "Failed");
        for kind in [
            task_type::INSERT_TAGGED_CP,
            task_type::FLR_JOURNAL_MOUNT,
            task_type::FLR_JOURNAL_UNMOUNT,
            task_type::FAIL_OVER_TEST,
            task_type::STOP_FAIL_OVER_TEST,
            task_type::CLONE,
            task_type::FAIL_OVER,
            task_type::MOVE,
            task_type::FORCE_SYNC,
            task_type::UPDATE_PROTECTION_GROUP,
            task_type::CREATE_PROTECTION_GROUP,
            task_type::REMOVE_PROTECTION_GROUP,
            task_type::INSTALL_VRA,
            task_type::RESTORE_FROM_RETENTION_SET,
            task_type::UNINSTALL_VRA,
            task_type::EDIT_VRA,
            task_type::UPGRADE_VRA,
            task_type::CHANGE_RECOVERY_HOST,
            task_type::FORCE_REMOVE_PROTECTION_GROUP,
            task_type::PAUSE_PROTECTION_GROUP,
            task_type::RESUME_PROTECTION_GROUP,
            task_type::FAILOVER_COMMIT,
            task_type::FAILOVER_ROLLBACK,
            task_type::MOVE_COMMIT,
            task_type::MOVE_ROLLBACK,
            task_type::MANUAL_RETENTION,
            task_type::FLR_BACKUP_MOUNT,
            task_type::FLR_BACKUP_UNMOUNT,
        ] {
            assert_eq!(TASK_TYPE.name(TASK_TYPE.parse(kind).unwrap()), kind);
        }
    }
}
