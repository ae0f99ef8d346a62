//! Why one VPG was left without its tag: a typed end of the insert machine whose `Display` is the
//! sentence a person reads and whose [`VpgProblem::kind`] is the class fronts map to exit codes.

use std::fmt;

use serde::Serialize;

use super::note::RunningInsert;
use crate::error::{ErrorKind, RewindError};

/// What a ZVM exchange met, as a problem keeps it: its class, its sentence and its few words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Met {
    /// The error's class.
    pub kind: ErrorKind,
    /// The error's sentence, naming the site and the request.
    pub said: String,
    /// What the site met, in a few words ([`RewindError::in_brief`]).
    pub brief: String,
}

impl From<&RewindError> for Met {
    fn from(e: &RewindError) -> Met {
        Met {
            kind: e.kind(),
            said: e.to_string(),
            brief: e.in_brief(),
        }
    }
}

impl fmt::Display for Met {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.said)
    }
}

/// Why a protecting VPG was not tagged (other than a task that ended Failed or Stopped, or one still
/// running at the deadline, which are outcomes of their own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VpgProblem {
    /// No configured site reaches the ZVM that serves the VPG.
    NoSite {
        /// The site the VPG's ZVM was found at.
        site: String,
    },
    /// The guard was told to stop before the insert was sent.
    Stopped {
        /// The VPG.
        vpg: String,
    },
    /// The deadline came while an earlier guard of this process held the VPG.
    BusyInThisProcess {
        /// The VPG.
        vpg: String,
    },
    /// The deadline came while a guard elsewhere (another replica of the team server) held the VPG
    /// for its insert.
    BusyElsewhere {
        /// The VPG.
        vpg: String,
    },
    /// The guard's lock (of its change, or of the VPG) could not be kept, so no insert was sent:
    /// another replica may take the change over meanwhile.
    LockLost {
        /// The VPG.
        vpg: String,
        /// The lock, and why.
        lock: String,
    },
    /// The deadline came before the insert could be sent.
    DeadlineBeforeInsert,
    /// The deadline came while an insert running at the VPG was waited for.
    DeadlineWaitingFor {
        /// The running insert.
        task_id: String,
        /// Whose it is.
        whose: RunningInsert,
    },
    /// A checkpoint with the tag may already exist, and it could not be looked for.
    MayExistUnread {
        /// The tag.
        tag: String,
        /// The VPG.
        vpg: String,
        /// What the look met.
        met: Met,
    },
    /// The ZVM refused the insert.
    Refused {
        /// What it said.
        met: Met,
    },
    /// An insert of unknown outcome, and an insert task that may be ours could not be followed.
    MaybeOursUnfollowed {
        /// What happened to the insert.
        what: String,
        /// The task that may be ours.
        task_id: String,
        /// The tag.
        tag: String,
        /// The VPG.
        vpg: String,
        /// What following it met.
        met: Met,
    },
    /// Each insert sent had an unknown outcome, and none happened.
    UnknownEachTime {
        /// How many were sent.
        sent: u32,
        /// What happened to the last.
        what: String,
        /// The configured site.
        site: String,
    },
    /// An insert of unknown outcome, and the tag could not be looked for.
    UnknownAndUnread {
        /// What happened to the insert.
        what: String,
        /// The tag.
        tag: String,
        /// The VPG.
        vpg: String,
        /// What the look met.
        met: Met,
    },
    /// The insert's task was started but could not be followed.
    Unfollowed {
        /// The task.
        task_id: String,
        /// What following it met.
        met: Met,
    },
    /// The insert Completed, and its checkpoint could not be looked for.
    NotLookedFor {
        /// The task.
        task_id: String,
        /// What the look met.
        met: Met,
    },
}

impl VpgProblem {
    /// The class of the problem: a deadline is classed as a slow ZVM is, as
    /// [`RewindError::Deadline`] is; one the ZVM met is its error's.
    pub fn kind(&self) -> ErrorKind {
        match self {
            VpgProblem::NoSite { .. } => ErrorKind::Usage,
            VpgProblem::Stopped { .. } => ErrorKind::Refused,
            VpgProblem::BusyInThisProcess { .. }
            | VpgProblem::BusyElsewhere { .. }
            | VpgProblem::LockLost { .. }
            | VpgProblem::DeadlineBeforeInsert
            | VpgProblem::DeadlineWaitingFor { .. }
            | VpgProblem::UnknownEachTime { .. } => ErrorKind::Connection,
            VpgProblem::MayExistUnread { met, .. }
            | VpgProblem::Refused { met }
            | VpgProblem::MaybeOursUnfollowed { met, .. }
            | VpgProblem::UnknownAndUnread { met, .. }
            | VpgProblem::Unfollowed { met, .. }
            | VpgProblem::NotLookedFor { met, .. } => met.kind,
        }
    }

    /// The insert task the problem concerns, when there is one.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            VpgProblem::MaybeOursUnfollowed { task_id, .. }
            | VpgProblem::Unfollowed { task_id, .. }
            | VpgProblem::NotLookedFor { task_id, .. } => Some(task_id),
            _ => None,
        }
    }

    /// What the ZVM met, in a few words, when an error of its own ended the VPG ("nothing listens
    /// at URL"): one cause shared by several VPGs is said once.
    pub fn cause(&self) -> Option<&str> {
        self.met().map(|m| m.brief.as_str())
    }

    /// The problem as a row of a table says it, beside the columns that name its VPG and its task:
    /// what happened, each fact once, the ZVM's error in its few words.
    pub fn in_row(&self) -> InRow<'_> {
        InRow(self)
    }

    /// What a ZVM exchange met, when an error of its own ended the VPG.
    fn met(&self) -> Option<&Met> {
        match self {
            VpgProblem::MayExistUnread { met, .. }
            | VpgProblem::Refused { met }
            | VpgProblem::MaybeOursUnfollowed { met, .. }
            | VpgProblem::UnknownAndUnread { met, .. }
            | VpgProblem::Unfollowed { met, .. }
            | VpgProblem::NotLookedFor { met, .. } => Some(met),
            _ => None,
        }
    }
}

// A problem as a report's JSON writes it, and its schema: the task, the class, the sentence and
// the cause, the shape `--json` and the tools' published schemas promise. (Plain comments: a doc
// comment would enter that schema.)
#[derive(Serialize, schemars::JsonSchema)]
struct Written<'a> {
    /// The task, if one was started.
    task_id: Option<&'a str>,
    /// The class of what went wrong, as [`RewindError::kind`] gives it: a ZVM that refused the
    /// insert is `refused`, one that could not be reached or followed is `connection`.
    kind: ErrorKind,
    /// What went wrong and what to do.
    message: String,
    /// What the ZVM met, in a few words, when an error of its own ended the VPG ("nothing
    /// listens at URL"): one cause shared by several VPGs is said once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cause: Option<&'a str>,
}

impl Serialize for VpgProblem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            task_id: self.task_id(),
            kind: self.kind(),
            message: self.to_string(),
            cause: self.cause(),
        }
        .serialize(serializer)
    }
}

impl schemars::JsonSchema for VpgProblem {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VpgProblem".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Written::json_schema(generator)
    }
}

impl fmt::Display for VpgProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VpgProblem::NoSite { site } => {
                write!(f, "no configured site reaches the ZVM {site} of this VPG")
            }
            VpgProblem::Stopped { vpg } => write!(
                f,
                "the guard was told to stop (cancelled, or interrupted) before its insert into {vpg} was sent; nothing was inserted there; guard again to tag it"
            ),
            VpgProblem::BusyInThisProcess { vpg } => write!(
                f,
                "the deadline came while this VPG was busy with an earlier guard of this process; nothing was inserted into {vpg}; guard again"
            ),
            VpgProblem::BusyElsewhere { vpg } => write!(
                f,
                "the deadline came while a guard on another replica held this VPG for its insert; nothing was inserted into {vpg}; guard again"
            ),
            VpgProblem::LockLost { vpg, lock } => write!(
                f,
                "this guard could not keep {lock}, so nothing was inserted into {vpg} (another replica may take the change over); check the journal's database and guard again"
            ),
            VpgProblem::DeadlineBeforeInsert => f.write_str(
                "the deadline came before the insert could be sent; nothing was inserted; guard again",
            ),
            VpgProblem::DeadlineWaitingFor { task_id, whose } => write!(
                f,
                "the deadline came while waiting for insert task {task_id} of {whose} at this VPG; nothing more was inserted; guard again"
            ),
            VpgProblem::MayExistUnread { tag, vpg, met } => write!(
                f,
                "a checkpoint with the tag {tag:?} may already exist in VPG {vpg}, and looking for it failed: {met}; nothing more was inserted, so that the tag is not inserted twice; guard again"
            ),
            VpgProblem::Refused { met } => met.fmt(f),
            VpgProblem::MaybeOursUnfollowed {
                what,
                task_id,
                tag,
                vpg,
                met,
            } => write!(
                f,
                "{what}, and insert task {task_id}, which may be ours, could not be followed: {met}; look at the task, and for the tag {tag:?} in VPG {vpg}, before guarding again"
            ),
            VpgProblem::UnknownEachTime { sent, what, site } => write!(
                f,
                "the insert was sent {sent} times and each time its outcome was unknown, the last time because {what}; no checkpoint with the tag exists; check the network to the ZVM of {site} and guard again"
            ),
            VpgProblem::UnknownAndUnread {
                what,
                tag,
                vpg,
                met,
            } => write!(
                f,
                "{what}, and looking for the tag failed: {met}; look for the tag {tag:?} in VPG {vpg} before guarding again"
            ),
            VpgProblem::Unfollowed { task_id, met } => write!(
                f,
                "insert task {task_id} was started but could not be followed: {met}; the insert may still complete, look at the task in the ZVM"
            ),
            VpgProblem::NotLookedFor { met, .. } => write!(
                f,
                "the insert Completed, but its checkpoint could not be looked for: {met}; list the tags of this VM to check"
            ),
        }
    }
}

/// A problem as a table row says it ([`VpgProblem::in_row`]).
#[derive(Debug, Clone, Copy)]
pub struct InRow<'a>(&'a VpgProblem);

impl fmt::Display for InRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let brief = |met: &Met| met.brief.clone();
        match self.0 {
            VpgProblem::NoSite { site } => write!(f, "no configured site reaches its ZVM {site}"),
            VpgProblem::Stopped { .. } => {
                f.write_str("told to stop before its insert was sent; nothing was inserted")
            }
            VpgProblem::BusyInThisProcess { .. } => f.write_str(
                "the deadline came while an earlier guard of this process held it; nothing was inserted",
            ),
            VpgProblem::BusyElsewhere { .. } => f.write_str(
                "the deadline came while a guard on another replica held it; nothing was inserted",
            ),
            VpgProblem::LockLost { lock, .. } => {
                write!(f, "{lock} could not be kept; nothing was inserted")
            }
            VpgProblem::DeadlineBeforeInsert => {
                f.write_str("the deadline came before the insert could be sent; nothing was inserted")
            }
            VpgProblem::DeadlineWaitingFor { task_id, whose } => write!(
                f,
                "the deadline came while waiting for insert task {task_id} of {whose}; nothing more was inserted"
            ),
            VpgProblem::MayExistUnread { met, .. } => write!(
                f,
                "the tag may already be there and looking for it failed: {}; nothing more was inserted",
                brief(met)
            ),
            VpgProblem::Refused { met } => write!(f, "the insert was refused: {}", brief(met)),
            VpgProblem::MaybeOursUnfollowed { what, met, .. } => write!(
                f,
                "{what}; this task may be ours and could not be followed: {}",
                brief(met)
            ),
            VpgProblem::UnknownEachTime { sent, what, .. } => write!(
                f,
                "sent {sent} times, each of unknown outcome (the last: {what}); no checkpoint has the tag"
            ),
            VpgProblem::UnknownAndUnread { what, met, .. } => write!(
                f,
                "{what}, and looking for the tag failed: {}",
                brief(met)
            ),
            VpgProblem::Unfollowed { met, .. } => write!(
                f,
                "started, then could not be followed: {}; it may still complete",
                brief(met)
            ),
            VpgProblem::NotLookedFor { met, .. } => write!(
                f,
                "Completed, but its checkpoint could not be looked for: {}",
                brief(met)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "task-7f3a";
    const VPG: &str = "web-dr";
    const SAID: &str =
        "nothing listens at https://zvm:443/v1/tasks/task-7f3a (site boston): check the URL";
    const BRIEF: &str = "nothing listens at https://zvm:443";

    fn met() -> Met {
        Met {
            kind: ErrorKind::Connection,
            said: SAID.into(),
            brief: BRIEF.into(),
        }
    }

    /// Each problem as a row says it, and whether the row must name the task itself (no column
    /// holds it).
    fn rows() -> Vec<(VpgProblem, bool)> {
        let (task_id, tag, vpg, what) = (
            TASK.to_string(),
            "ai:x".to_string(),
            VPG.to_string(),
            "no answer came".to_string(),
        );
        vec![
            (
                VpgProblem::NoSite {
                    site: "denver".into(),
                },
                false,
            ),
            (VpgProblem::Stopped { vpg: vpg.clone() }, false),
            (VpgProblem::BusyInThisProcess { vpg: vpg.clone() }, false),
            (VpgProblem::BusyElsewhere { vpg: vpg.clone() }, false),
            (
                VpgProblem::LockLost {
                    vpg: vpg.clone(),
                    lock: "the lease change:ab in PostgreSQL db:5432/team".into(),
                },
                false,
            ),
            (VpgProblem::DeadlineBeforeInsert, false),
            (
                VpgProblem::DeadlineWaitingFor {
                    task_id: task_id.clone(),
                    whose: RunningInsert::EarlierGuardOfThisProcess,
                },
                true,
            ),
            (
                VpgProblem::MayExistUnread {
                    tag: tag.clone(),
                    vpg: vpg.clone(),
                    met: met(),
                },
                false,
            ),
            (VpgProblem::Refused { met: met() }, false),
            (
                VpgProblem::MaybeOursUnfollowed {
                    what: what.clone(),
                    task_id: task_id.clone(),
                    tag: tag.clone(),
                    vpg: vpg.clone(),
                    met: met(),
                },
                false,
            ),
            (
                VpgProblem::UnknownEachTime {
                    sent: 3,
                    what: what.clone(),
                    site: "boston".into(),
                },
                false,
            ),
            (
                VpgProblem::UnknownAndUnread {
                    what,
                    tag,
                    vpg,
                    met: met(),
                },
                false,
            ),
            (
                VpgProblem::Unfollowed {
                    task_id: task_id.clone(),
                    met: met(),
                },
                false,
            ),
            (
                VpgProblem::NotLookedFor {
                    task_id,
                    met: met(),
                },
                false,
            ),
        ]
    }

    #[test]
    fn a_row_says_each_fact_once_beside_the_vpg_and_task_columns() {
        for (problem, names_the_task) in rows() {
            let row = problem.in_row().to_string();
            let tasks = usize::from(names_the_task);
            assert_eq!(row.matches(TASK).count(), tasks, "{problem:?}: {row}");
            assert!(!row.contains(VPG), "the VPG column names it: {row}");
            assert!(!row.contains("/v1/"), "no request URL: {row}");
            if problem.cause().is_some() {
                assert_eq!(
                    row.matches(BRIEF).count(),
                    1,
                    "the ZVM's error in brief: {row}"
                );
            }
        }
    }

    #[test]
    fn a_problem_serializes_as_the_task_class_sentence_and_cause_it_always_had() {
        let problem = VpgProblem::Unfollowed {
            task_id: TASK.into(),
            met: met(),
        };
        let json = serde_json::to_value(&problem).unwrap();
        assert_eq!(json["task_id"], TASK);
        assert_eq!(json["kind"], "connection");
        assert_eq!(json["message"], problem.to_string());
        assert_eq!(json["cause"], BRIEF);
        let json = serde_json::to_value(VpgProblem::DeadlineBeforeInsert).unwrap();
        assert!(
            json["task_id"].is_null() && json.get("cause").is_none(),
            "{json}"
        );
    }
}
