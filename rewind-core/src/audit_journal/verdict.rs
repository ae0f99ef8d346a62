//! What a journal record says came of it: its verdict ([`JournalVerdict`]), and each VPG's outcome
//! ([`JournalOutcome`]).
//!
//! Each is a word on disk, the variant's snake_case name. A word this version does not know, written
//! by a newer one, is kept as it is (`Other`): such a record still reads, shows its own word and is
//! folded as a record of no verdict this version acts on, so a newer version's lines never make the
//! journal unreadable.

use serde::{Deserialize, Serialize};

/// The verdict of a journal record: a guard's (its lines as written, or read back) or a recovery's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JournalVerdict {
    /// A guard's intent or task line: the guard had not ended when it was written. A forwarded
    /// call's line written before the call was sent.
    Started,
    /// Read back: an attempt with no verdict line whose process still runs.
    Running,
    /// Read back: an attempt with no verdict line whose process is gone (killed, or stopped by a
    /// second signal); what it may have inserted is in its VPG lines.
    Interrupted,
    /// A guard: at least one VPG is protecting and every protecting VPG was tagged.
    Guarded,
    /// A guard: some protecting VPG was not tagged, none is protecting, or the verdict could not
    /// be journaled.
    NotGuarded,
    /// A guard or a recovery: the deadline came while its Zerto tasks ran.
    StillRunning,
    /// A file-level recovery: its files were recovered.
    Recovered,
    /// A failover test or clone: its task Completed.
    Completed,
    /// A journal VM restore: restored, its task waiting for a person's commit or rollback.
    Waiting,
    /// A recovery an agent proposed and the person did not approve: nothing was sent.
    Declined,
    /// A recovery that failed.
    Failed,
    /// A change a person said is done (`rewind done`).
    Closed,
    /// A recovery whose write was sent but whose outcome could not be learnt.
    #[serde(rename = "unknown")]
    OutcomeUnknown,
    /// The VPGs of a guarded VM changed after its guard (a `protection_changed` record).
    ProtectionChanged,
    /// A forwarded call that was sent and whose end cannot be known (cancelled, or its upstream
    /// gone): it may have changed the VM. It is never sent again.
    MayHaveRun,
    /// A word of a newer version, kept as written; this version never writes one.
    #[serde(untagged)]
    Other(String),
}

impl JournalVerdict {
    /// The word, as the journal holds it.
    pub fn as_str(&self) -> &str {
        match self {
            JournalVerdict::Started => "started",
            JournalVerdict::Running => "running",
            JournalVerdict::Interrupted => "interrupted",
            JournalVerdict::Guarded => "guarded",
            JournalVerdict::NotGuarded => "not_guarded",
            JournalVerdict::StillRunning => "still_running",
            JournalVerdict::Recovered => "recovered",
            JournalVerdict::Completed => "completed",
            JournalVerdict::Waiting => "waiting",
            JournalVerdict::Declined => "declined",
            JournalVerdict::Failed => "failed",
            JournalVerdict::Closed => "closed",
            JournalVerdict::OutcomeUnknown => "unknown",
            JournalVerdict::ProtectionChanged => "protection_changed",
            JournalVerdict::MayHaveRun => "may_have_run",
            JournalVerdict::Other(word) => word,
        }
    }
}

impl std::fmt::Display for JournalVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What came of one VPG of a record: of a guard's insert there, or of a recovery from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JournalOutcome {
    /// A guard's intent: the insert is about to be sent, so it may have been.
    Pending,
    /// A guard's task line: the insert was sent and its task id learnt.
    Sent,
    /// The tagged checkpoint exists: its task Completed and it is listed.
    Tagged,
    /// A keep copied the tagged checkpoint into a retention set.
    Kept,
    /// The VPG is not protecting, so it was not tagged.
    Skipped,
    /// The insert task, or the recovery, ended Failed or Stopped.
    Failed,
    /// The deadline came while the task ran; it was not stopped.
    StillRunning,
    /// Something went wrong around the insert.
    Error,
    /// A file-level recovery from the VPG's tagged checkpoint: its files were recovered.
    Recovered,
    /// A failover test or clone of the VPG: its task Completed.
    Completed,
    /// A journal VM restore from the VPG's tagged checkpoint, waiting for a commit or a rollback.
    Waiting,
    /// A recovery whose write was sent but whose outcome could not be learnt.
    #[serde(rename = "unknown")]
    OutcomeUnknown,
    /// The VM is in this VPG now, and was not when it was guarded: nothing of the guard is in it.
    Added,
    /// The VM was in this VPG when it was guarded, and is not now (the VPG was deleted, or the VM
    /// taken out of it): the guard's tag there cannot be recovered from.
    Removed,
    /// A word of a newer version, kept as written; this version never writes one.
    #[serde(untagged)]
    Other(String),
}

impl JournalOutcome {
    /// The word, as the journal holds it.
    pub fn as_str(&self) -> &str {
        match self {
            JournalOutcome::Pending => "pending",
            JournalOutcome::Sent => "sent",
            JournalOutcome::Tagged => "tagged",
            JournalOutcome::Kept => "kept",
            JournalOutcome::Skipped => "skipped",
            JournalOutcome::Failed => "failed",
            JournalOutcome::StillRunning => "still_running",
            JournalOutcome::Error => "error",
            JournalOutcome::Recovered => "recovered",
            JournalOutcome::Completed => "completed",
            JournalOutcome::Waiting => "waiting",
            JournalOutcome::OutcomeUnknown => "unknown",
            JournalOutcome::Added => "added",
            JournalOutcome::Removed => "removed",
            JournalOutcome::Other(word) => word,
        }
    }

    /// The outcome of a recovery's one VPG, which is the recovery's verdict.
    pub fn of_recovery(verdict: &JournalVerdict) -> JournalOutcome {
        match verdict {
            JournalVerdict::Recovered => JournalOutcome::Recovered,
            JournalVerdict::Completed => JournalOutcome::Completed,
            JournalVerdict::Waiting => JournalOutcome::Waiting,
            JournalVerdict::StillRunning => JournalOutcome::StillRunning,
            JournalVerdict::Failed => JournalOutcome::Failed,
            JournalVerdict::OutcomeUnknown => JournalOutcome::OutcomeUnknown,
            // No recovery ends so; the word is kept as it is.
            other => JournalOutcome::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for JournalOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of the journal as this version writes them: a change here changes every journal
    /// already on disk.
    const VERDICTS: [(JournalVerdict, &str); 12] = [
        (JournalVerdict::Started, "started"),
        (JournalVerdict::Running, "running"),
        (JournalVerdict::Interrupted, "interrupted"),
        (JournalVerdict::Guarded, "guarded"),
        (JournalVerdict::NotGuarded, "not_guarded"),
        (JournalVerdict::StillRunning, "still_running"),
        (JournalVerdict::Recovered, "recovered"),
        (JournalVerdict::Completed, "completed"),
        (JournalVerdict::Waiting, "waiting"),
        (JournalVerdict::Declined, "declined"),
        (JournalVerdict::Failed, "failed"),
        (JournalVerdict::OutcomeUnknown, "unknown"),
    ];
    const OUTCOMES: [(JournalOutcome, &str); 11] = [
        (JournalOutcome::Pending, "pending"),
        (JournalOutcome::Sent, "sent"),
        (JournalOutcome::Tagged, "tagged"),
        (JournalOutcome::Skipped, "skipped"),
        (JournalOutcome::Failed, "failed"),
        (JournalOutcome::StillRunning, "still_running"),
        (JournalOutcome::Error, "error"),
        (JournalOutcome::Recovered, "recovered"),
        (JournalOutcome::Completed, "completed"),
        (JournalOutcome::Waiting, "waiting"),
        (JournalOutcome::OutcomeUnknown, "unknown"),
    ];

    /// `value` as JSON, the word it displays, and `value` read back from `word`.
    fn check<T>(value: &T, word: &str)
    where
        T: Serialize + for<'de> Deserialize<'de> + std::fmt::Display + PartialEq + std::fmt::Debug,
    {
        assert_eq!(serde_json::to_value(value).unwrap(), word, "{value:?}");
        assert_eq!(value.to_string(), word, "{value:?}");
        let back: T = serde_json::from_value(serde_json::Value::from(word)).unwrap();
        assert_eq!(&back, value, "{word}");
    }

    #[test]
    fn each_verdict_and_outcome_is_its_word_on_disk_and_on_screen() {
        for (verdict, word) in &VERDICTS {
            check(verdict, word);
        }
        for (outcome, word) in &OUTCOMES {
            check(outcome, word);
        }
    }

    #[test]
    fn a_word_of_a_newer_version_reads_and_is_written_back_as_it_was() {
        check(&JournalVerdict::Other("approved".into()), "approved");
        check(&JournalOutcome::Other("queued".into()), "queued");
        assert!(serde_json::from_value::<JournalVerdict>(serde_json::json!(7)).is_err());
    }

    #[test]
    fn a_recoverys_vpg_outcome_is_its_verdict() {
        for (verdict, word) in &VERDICTS {
            let outcome = JournalOutcome::of_recovery(verdict);
            assert_eq!(outcome.as_str(), *word);
        }
    }
}
