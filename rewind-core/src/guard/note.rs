//! What a guard notes on its way: the attempt it took over, the inserts it waited for, retried or
//! reconciled. Each note is a variant carrying the VPG's, task's or attempt's names, so callers and
//! tests match what happened; its `Display` is the sentence a human reads, and the JSON and the audit
//! journal hold that sentence.

use std::fmt;

use crate::audit_journal::JournalVerdict;
use crate::codes::Code;
use crate::protection::ProtectionNote;

/// One note of a guard, about the guard as a whole ([`super::GuardReport::notes`]) or about one VPG
/// ([`super::VpgGuard::notes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardNote {
    /// What find_protection could not check.
    Protection(ProtectionNote),
    /// An earlier attempt of this VM and change was taken over: its tag is kept.
    TookOver {
        /// How the earlier attempt is named: `attempt <id>`, or when its guard was journaled.
        attempt: String,
        /// The change id.
        change_id: String,
        /// The earlier attempt's verdict.
        verdict: JournalVerdict,
    },
    /// No VPG of the VM is protecting, so nothing was tagged.
    NothingProtecting {
        /// The VM's name.
        vm: String,
    },
    /// The id of an insert task could not be written to the audit journal (the intent already
    /// accounts for the insert).
    TaskIdNotJournaled {
        /// The insert task.
        task_id: String,
        /// Why it could not be written.
        error: String,
    },
    /// The insert task of the earlier attempt this guard took over Completed: its checkpoint is
    /// adopted.
    EarlierInsertCompleted {
        /// How the earlier attempt is named.
        attempt: String,
        /// Its insert task.
        task_id: String,
    },
    /// The insert task of the earlier attempt ended otherwise, so the tag is inserted again.
    EarlierInsertEnded {
        /// How the earlier attempt is named.
        attempt: String,
        /// Its insert task.
        task_id: String,
        /// The state it ended in.
        state: Option<Code>,
        /// Its `CompleteReason`.
        reason: String,
    },
    /// The insert task of the earlier attempt was still running at the deadline.
    EarlierInsertStillRunning {
        /// How the earlier attempt is named.
        attempt: String,
        /// Its insert task.
        task_id: String,
    },
    /// The insert task of the earlier attempt could not be read, so its tag was looked for instead.
    EarlierInsertUnreadable {
        /// How the earlier attempt is named.
        attempt: String,
        /// Its insert task.
        task_id: String,
        /// Why it could not be read.
        error: String,
    },
    /// A checkpoint with the tag was listed before any insert (an earlier attempt's): it is adopted.
    TagAlreadyListed {
        /// The checkpoint, when the ZVM named it.
        checkpoint_id: Option<String>,
    },
    /// The insert Completed but its checkpoint was not listed yet when the deadline came.
    NotListedYet {
        /// The insert task.
        task_id: String,
    },
    /// No answer, an unreadable one or a 5xx came to the insert, so the tag was looked for before any
    /// second insert.
    OutcomeUnknown {
        /// What happened to the insert, in the HTTP client's words.
        what: String,
    },
    /// After an insert of unknown outcome, neither the tag nor an insert task that could be ours was
    /// found, so the insert is sent again.
    InsertingAgain {
        /// How many times it was sent again so far.
        resent: u32,
        /// How many times it may be (`guard.lost_response_retries`).
        of: u32,
    },
    /// The insert failed because another insert ran at the VPG (the back-to-back rule): waited for it
    /// and inserted again.
    BackToBack {
        /// The insert task that failed.
        task_id: String,
        /// The state it ended in.
        state: Code,
        /// The insert that made it fail.
        culprit: Culprit,
        /// The failed task's `CompleteReason`.
        reason: String,
        /// Which retry this is.
        retry: u32,
    },
    /// Other clients' running inserts at the VPG could not be read; the insert was sent anyway.
    RunningUnchecked {
        /// Why they could not be read.
        error: String,
    },
    /// An insert was running at the VPG and was waited for before inserting.
    WaitedForRunning {
        /// The running insert task.
        task_id: String,
        /// Whose insert it was.
        whose: RunningInsert,
    },
    /// A running insert waited for could not be followed.
    RunningUnfollowed {
        /// The running insert task.
        task_id: String,
        /// Why it could not be followed.
        error: String,
    },
    /// While reconciling an insert of unknown outcome, an insert task that may be ours was still
    /// running at the deadline.
    MaybeOursStillRunning {
        /// That insert task.
        task_id: String,
    },
    /// While reconciling an insert of unknown outcome, the tagged checkpoint was found: the insert
    /// had happened, so it was not sent again.
    FoundAfterUnknown {
        /// The checkpoint, when the ZVM named it.
        checkpoint_id: Option<String>,
        /// The insert task taken as ours, when one could be tied to the VPG.
        task_id: Option<String>,
    },
    /// The tag's way back is shorter than `[guard] min_way_back_hours`.
    ShortWayBack {
        /// The way back.
        way_back: crate::way_back::WayBack,
        /// The minimum, in minutes.
        minimum_minutes: i64,
    },
    /// How much history the VPG keeps could not be read, so how long the tag lasts is not known.
    WayBackUnknown {
        /// Why.
        error: String,
    },
}

/// The other insert that made an insert fail by the back-to-back rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Culprit {
    /// An insert task of another client, seen in the VPG's insert tasks.
    AnotherClient {
        /// Its task.
        task_id: String,
        /// Who started it, as the ZVM says (`unknown` when it does not).
        initiated_by: String,
    },
    /// Only the failure's reason says that another insert was running.
    Unnamed,
}

/// Whose insert was running at a VPG when a guard came to insert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunningInsert {
    /// An earlier guard of this process, whose deadline came while its insert ran.
    EarlierGuardOfThisProcess,
    /// Another client's.
    AnotherClient {
        /// Who started it, as the ZVM says (`unknown` when it does not).
        initiated_by: String,
    },
    /// Another client's, or the insert of an earlier attempt of this change whose answer was lost
    /// with its process.
    AnotherClientOrEarlierAttempt {
        /// Who started it, as the ZVM says (`unknown` when it does not).
        initiated_by: String,
    },
}

impl fmt::Display for Culprit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Culprit::AnotherClient {
                task_id,
                initiated_by,
            } => write!(
                f,
                "insert task {task_id} of another client ({initiated_by})"
            ),
            Culprit::Unnamed => f.write_str("another insert"),
        }
    }
}

impl fmt::Display for RunningInsert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunningInsert::EarlierGuardOfThisProcess => {
                f.write_str("an earlier guard of this process, whose deadline came while it ran")
            }
            RunningInsert::AnotherClient { initiated_by } => {
                write!(f, "another client ({initiated_by})")
            }
            RunningInsert::AnotherClientOrEarlierAttempt { initiated_by } => write!(
                f,
                "another client ({initiated_by}), or an earlier attempt of this change"
            ),
        }
    }
}

impl fmt::Display for GuardNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuardNote::Protection(note) => note.fmt(f),
            GuardNote::TookOver {
                attempt,
                change_id,
                verdict,
            } => write!(
                f,
                "took over {attempt} of change {change_id} (verdict {verdict}): its tag is kept, and what it inserted is adopted rather than inserted again; to pin a new checkpoint, guard with a new change id"
            ),
            GuardNote::NothingProtecting { vm } => write!(
                f,
                "no VPG of {vm} is protecting, so nothing was tagged and Zerto cannot rewind this change"
            ),
            GuardNote::TaskIdNotJournaled { task_id, error } => write!(
                f,
                "the id of insert task {task_id} could not be journaled: {error}"
            ),
            GuardNote::EarlierInsertCompleted { attempt, task_id } => write!(
                f,
                "took over {attempt} of this change: its insert task {task_id} Completed, so its checkpoint is adopted and the tag was not inserted again"
            ),
            GuardNote::EarlierInsertEnded {
                attempt,
                task_id,
                state,
                reason,
            } => {
                let state = state.as_ref().map(ToString::to_string).unwrap_or_default();
                write!(
                    f,
                    "took over {attempt} of this change: its insert task {task_id} ended {state} ({reason}), so the tag is inserted again"
                )
            }
            GuardNote::EarlierInsertStillRunning { attempt, task_id } => write!(
                f,
                "took over {attempt} of this change: its insert task {task_id} was still running at the deadline"
            ),
            GuardNote::EarlierInsertUnreadable {
                attempt,
                task_id,
                error,
            } => write!(
                f,
                "took over {attempt} of this change, but its insert task {task_id} could not be read ({error}); looked for its tag instead"
            ),
            GuardNote::TagAlreadyListed { checkpoint_id } => write!(
                f,
                "the tagged checkpoint {} was already there, so the tag was not inserted again",
                checkpoint_id.as_deref().unwrap_or("?")
            ),
            GuardNote::NotListedYet { task_id } => write!(
                f,
                "task {task_id} Completed but the checkpoint was not listed yet when the deadline came; list the tags of this VM later to see it"
            ),
            GuardNote::OutcomeUnknown { what } => {
                write!(f, "{what}; looked for the tag before any second insert")
            }
            GuardNote::InsertingAgain { resent, of } => write!(
                f,
                "no checkpoint with the tag and no insert task that could be ours was found, so the insert did not happen; inserting again ({resent} of {of})"
            ),
            GuardNote::BackToBack {
                task_id,
                state,
                culprit,
                reason,
                retry,
            } => write!(
                f,
                "insert task {task_id} ended {state} because {culprit} was running at this VPG ({reason}); waited for it and inserted again (retry {retry})"
            ),
            GuardNote::RunningUnchecked { error } => write!(
                f,
                "could not check for other clients' running inserts at this VPG ({error}); inserting anyway"
            ),
            GuardNote::WaitedForRunning { task_id, whose } => write!(
                f,
                "insert task {task_id} of {whose} was running at this VPG; waited for it before inserting"
            ),
            GuardNote::RunningUnfollowed { task_id, error } => {
                write!(f, "could not follow task {task_id}: {error}")
            }
            GuardNote::MaybeOursStillRunning { task_id } => write!(
                f,
                "insert task {task_id}, which may be ours, was still running at the deadline"
            ),
            GuardNote::FoundAfterUnknown {
                checkpoint_id,
                task_id,
            } => found_after_unknown(f, checkpoint_id.as_deref(), task_id.as_deref()),
            GuardNote::ShortWayBack {
                way_back,
                minimum_minutes,
            } => short_way_back(f, way_back, *minimum_minutes),
            GuardNote::WayBackUnknown { error } => write!(
                f,
                "how much journal history this VPG keeps could not be read ({error}), so how long its tag lasts is not known; `rewind tags` says it later"
            ),
        }
    }
}

/// The tag was found after an insert of unknown outcome, with or without the task that inserted it.
fn found_after_unknown(
    f: &mut fmt::Formatter<'_>,
    checkpoint_id: Option<&str>,
    task_id: Option<&str>,
) -> fmt::Result {
    let checkpoint = checkpoint_id.unwrap_or("?");
    match task_id {
        Some(id) => write!(
            f,
            "found the tagged checkpoint {checkpoint} and its insert task {id}: the insert had happened, so it was not sent again"
        ),
        None => write!(
            f,
            "found the tagged checkpoint {checkpoint}: the insert had happened, so it was not sent again"
        ),
    }
}

/// The tag's way back is shorter than the configured minimum: say how short, why, and what lengthens
/// it.
fn short_way_back(
    f: &mut fmt::Formatter<'_>,
    way_back: &crate::way_back::WayBack,
    minimum_minutes: i64,
) -> fmt::Result {
    let left = crate::way_back::span(way_back.lasts());
    let until = way_back.recoverable_until.format("%Y-%m-%d %H:%M UTC");
    let minimum = crate::way_back::span(chrono::Duration::minutes(minimum_minutes));
    let why = match &way_back.estimate_because {
        Some(because) => format!(
            "the journal holds about {} min of its configured {} min ({because})",
            way_back.actual_history_minutes.unwrap_or_default(),
            way_back.configured_history_minutes
        ),
        None => format!(
            "the VPG keeps {} min of journal history",
            way_back.configured_history_minutes
        ),
    };
    write!(
        f,
        "this tag can be recovered from for only {left} (until {until}), less than the {minimum} asked for: {why}; to keep it longer run `rewind keep` (Extended Journal Copy) once the change is made, or raise the VPG's journal history"
    )
}

serialize_as_text!(GuardNote);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_serializes_as_the_sentence_it_displays() {
        let note = GuardNote::WaitedForRunning {
            task_id: "t-7".into(),
            whose: RunningInsert::AnotherClient {
                initiated_by: "ops".into(),
            },
        };
        let text = "insert task t-7 of another client (ops) was running at this VPG; waited for it before inserting";
        assert_eq!(note.to_string(), text);
        assert_eq!(serde_json::to_value(&note).unwrap(), text);
    }

    #[test]
    fn a_note_has_the_json_schema_of_a_string() {
        let schema = schemars::schema_for!(Vec<GuardNote>);
        assert_eq!(
            serde_json::to_value(&schema).unwrap()["items"],
            serde_json::json!({"type": "string"})
        );
    }
}
