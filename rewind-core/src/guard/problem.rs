//! Why one VPG was left without its tag: a typed end of the insert machine whose `Display` is the
//! sentence a person reads and whose [`VpgProblem::kind`] is the class fronts map to exit codes.

use std::fmt;

use super::note::RunningInsert;
use super::report::Outcome;
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

    /// What the ZVM met, in a few words, when an error of its own ended the VPG.
    fn cause(&self) -> Option<&Met> {
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

impl From<VpgProblem> for Outcome {
    fn from(p: VpgProblem) -> Outcome {
        Outcome::Error {
            task_id: p.task_id().map(str::to_string),
            kind: p.kind(),
            cause: p.cause().map(|m| m.brief.clone()),
            message: p.to_string(),
        }
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
