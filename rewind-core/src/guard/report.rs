//! What a guard answers: its verdict, and each VPG's outcome with its notes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::note::GuardNote;
use super::problem::VpgProblem;
use crate::audit_journal::{JournalError, Person};
use crate::codes::Code;
use crate::error::ErrorKind;
use crate::progress::{Stage, elapsed_text};
use crate::vm::VmRef;
use crate::way_back::WayBack;

/// The verdict of a guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At least one VPG is protecting and every protecting VPG was tagged: the change may go ahead.
    Guarded,
    /// Some protecting VPG was not tagged, or none is protecting: do not rely on Zerto for this change.
    NotGuarded,
    /// The deadline came with tasks still running; their ids are in the report.
    StillRunning,
}

/// What happened at one VPG.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The tagged checkpoint exists: its task Completed and it is listed.
    Tagged {
        /// The insert task (unknown only when an insert of unknown outcome was reconciled without
        /// finding its task).
        task_id: Option<String>,
        /// The task's state, Completed.
        task_state: Option<Code>,
        /// The checkpoint.
        checkpoint_id: String,
        /// The checkpoint's time (the ZVM's clock).
        timestamp: Option<DateTime<Utc>>,
    },
    /// The VPG is not protecting, so it was not tagged.
    Skipped {
        /// Why.
        reason: String,
    },
    /// The insert task ended Failed or Stopped: there is no checkpoint.
    Failed {
        /// The task.
        task_id: String,
        /// Its terminal state.
        task_state: Code,
        /// Its `CompleteReason`.
        complete_reason: String,
    },
    /// The deadline came first; the task was not stopped.
    StillRunning {
        /// The task still running (or Completed but not yet listed).
        task_id: String,
        /// Its last known state.
        task_state: Option<Code>,
        /// `running` (the task) or `listing` (Completed, not yet listed).
        stage: Stage,
    },
    /// Something went wrong around the insert; `task_id` is kept when there was one.
    Error {
        // Why the VPG was not tagged, typed to the fronts; the JSON writes its task, class,
        // sentence and cause (`VpgProblem`'s `Serialize`), the shape the published schema holds.
        #[serde(flatten)]
        problem: VpgProblem,
    },
}

impl From<VpgProblem> for Outcome {
    fn from(problem: VpgProblem) -> Outcome {
        Outcome::Error { problem }
    }
}

/// One VPG's part of a guard.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VpgGuard {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// The configured site whose ZVM was called.
    pub site: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// How long its tag stays recoverable, when it was tagged and the ZVM said how much history the
    /// VPG keeps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub way_back: Option<WayBack>,
    /// Retries, waits and reconciliations, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<GuardNote>,
}

impl Verdict {
    /// The word, as `--json` and the journal write it.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Guarded => "guarded",
            Verdict::NotGuarded => "not_guarded",
            Verdict::StillRunning => "still_running",
        }
    }
}

impl Outcome {
    /// The word, as `--json` writes it.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Tagged { .. } => "tagged",
            Outcome::Skipped { .. } => "skipped",
            Outcome::Failed { .. } => "failed",
            Outcome::StillRunning { .. } => "still_running",
            Outcome::Error { .. } => "error",
        }
    }

    /// Whether the VPG was tagged.
    pub fn is_tagged(&self) -> bool {
        matches!(self, Outcome::Tagged { .. })
    }

    /// The insert task of the outcome, when there is one.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Outcome::Tagged { task_id, .. } => task_id.as_deref(),
            Outcome::Error { problem } => problem.task_id(),
            Outcome::Failed { task_id, .. } | Outcome::StillRunning { task_id, .. } => {
                Some(task_id)
            }
            Outcome::Skipped { .. } => None,
        }
    }
}

impl VpgGuard {
    /// What went wrong at this VPG, in one line naming it: a failed task with its reason, an error,
    /// or a task still running. `None` when it was tagged or skipped.
    pub fn problem(&self) -> Option<String> {
        let name = &self.vpg_name;
        match &self.outcome {
            Outcome::Failed {
                task_id,
                task_state,
                complete_reason,
            } => Some(format!(
                "VPG {name}: task {task_id} ended {task_state}: {complete_reason}"
            )),
            Outcome::Error { problem } => Some(format!("VPG {name}: {problem}")),
            Outcome::StillRunning { task_id, .. } => Some(format!(
                "VPG {name}: task {task_id} is still running (not stopped)"
            )),
            Outcome::Tagged { .. } | Outcome::Skipped { .. } => None,
        }
    }
}

/// What to do after a guard that did not end `guarded`: the one next step each front words for
/// its reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardNext {
    /// The ZVM of these sites could not be asked or followed: guard again with the same change id
    /// once they answer; that guard takes over what this one sent.
    AgainOnceAnswering {
        /// The configured sites.
        sites: Vec<String>,
    },
    /// A task failed or a ZVM refused: look at the VPGs named, then guard again with the same
    /// change id.
    AgainAfterLooking,
    /// Tasks were still running: list the change's tags in a while.
    ListTagsLater,
    /// No VPG could be tagged because these are syncing: guard again when the sync is over.
    AgainAfterSync {
        /// The VPGs syncing.
        vpgs: Vec<String>,
    },
    /// No VPG protects the VM: Zerto cannot rewind a change to it.
    NothingToTag,
    /// The verdict could not be journaled: make the journal writable, then guard again.
    FixJournal,
}

/// The result of a guard.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GuardReport {
    /// The verdict.
    pub verdict: Verdict,
    /// The tag written into every protecting VPG.
    pub tag: String,
    /// The VM.
    pub vm: VmRef,
    /// The agent.
    pub agent: String,
    /// The signed-in person the agent guarded for, through a team server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// The action.
    pub action: String,
    /// The change id.
    pub change_id: String,
    /// Every VPG of the VM, tagged or not.
    pub vpgs: Vec<VpgGuard>,
    /// Until when the change can be rewound at every tagged VPG: the shortest of their ways back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recoverable_until: Option<DateTime<Utc>>,
    /// How long the guard took.
    pub elapsed_ms: u64,
    /// Notes about the guard as a whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<GuardNote>,
    /// This attempt's id in the audit journal.
    pub attempt_id: String,
    /// The earlier attempt of this VM and change that this guard took over, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takes_over: Option<String>,
    /// The configured sites that answered the lookup, when not every configured site did
    /// ([`crate::Protection::asked`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sites: Option<Vec<String>>,
    /// Why the verdict could not be written to the audit journal. The guard is then
    /// `not_guarded` whatever Zerto holds, since the hook decides from the journal: each VPG's outcome
    /// still says what is in Zerto.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_error: Option<String>,
}

impl GuardReport {
    /// Marks the report as not journaled: the verdict could not be written, so a guarded change is
    /// not guarded (the hook will deny it), and the error says where and what to do.
    pub(crate) fn not_journaled(&mut self, e: &JournalError) {
        let tagged = self
            .vpgs
            .iter()
            .any(|v| matches!(v.outcome, Outcome::Tagged { .. }));
        let what = if tagged {
            "the tagged checkpoints listed here exist in Zerto, but"
        } else {
            "what this guard did is listed here, but"
        };
        self.journal_error = Some(format!(
            "{what} its verdict could not be written to the audit journal ({e}); the hook denies changes to {} until a guarded record is there: free space or fix the journal, then guard again with change id {} (what was inserted is adopted, not inserted twice)",
            self.vm.name, self.change_id
        ));
        if self.verdict == Verdict::Guarded {
            self.verdict = Verdict::NotGuarded;
        }
    }

    /// One line for humans: the verdict, the VM, the change, how many protecting VPGs were tagged, and
    /// how long it took.
    pub fn headline(&self) -> String {
        let verdict = match self.verdict {
            Verdict::Guarded => "GUARDED",
            Verdict::NotGuarded => "NOT GUARDED",
            Verdict::StillRunning => "STILL RUNNING",
        };
        let protecting = self
            .vpgs
            .iter()
            .filter(|v| !matches!(v.outcome, Outcome::Skipped { .. }))
            .count();
        let tagged = self
            .vpgs
            .iter()
            .filter(|v| matches!(v.outcome, Outcome::Tagged { .. }))
            .count();
        let mut what = if protecting == 0 {
            "no VPG of it is protecting, so nothing was tagged".to_string()
        } else {
            format!("{tagged} of {protecting} protecting VPG(s) tagged")
        };
        if self.journal_error.is_some() {
            what.push_str(", but not journaled");
        }
        format!(
            "{verdict}: {} ({}) for change {}: {what}, in {}",
            self.vm.name,
            self.vm.id,
            self.change_id,
            elapsed_text(self.elapsed_ms)
        )
    }

    /// The headline, the tag, then one line per VPG with its notes.
    pub fn summary(&self) -> String {
        let mut out = format!("{}\n  tag: {}", self.headline(), self.tag);
        for v in &self.vpgs {
            let what = match &v.outcome {
                Outcome::Tagged {
                    task_id,
                    checkpoint_id,
                    ..
                } => format!(
                    "tagged, checkpoint {checkpoint_id} (task {})",
                    task_id.as_deref().unwrap_or("unknown")
                ),
                Outcome::Skipped { reason } => format!("skipped: {reason}"),
                Outcome::Failed {
                    task_id,
                    task_state,
                    complete_reason,
                } => format!("FAILED: task {task_id} ended {task_state}: {complete_reason}"),
                Outcome::StillRunning { task_id, stage, .. } => format!(
                    "still running: task {task_id} ({})",
                    if *stage == Stage::Listing {
                        "Completed, not yet listed"
                    } else {
                        "in progress"
                    }
                ),
                Outcome::Error { problem } => match problem.task_id() {
                    Some(t) => format!("ERROR (task {t}): {problem}"),
                    None => format!("ERROR: {problem}"),
                },
            };
            out.push_str(&format!("\n  {}: {what}", v.vpg_name));
            for n in &v.notes {
                out.push_str(&format!("\n    note: {n}"));
            }
        }
        out.push_str(&self.way_back_lines());
        for n in &self.notes {
            out.push_str(&format!("\n  note: {n}"));
        }
        out
    }

    /// The tagged VPGs' ways back, the shortest first, one line each: how long this change can be
    /// rewound (`web-local: recoverable until 2026-12-05 10:27 UTC (1 h from now)`).
    pub fn ways_back(&self) -> Vec<String> {
        let mut ways: Vec<(&str, &WayBack)> = self
            .vpgs
            .iter()
            .filter_map(|v| Some((v.vpg_name.as_str(), v.way_back.as_ref()?)))
            .collect();
        ways.sort_by_key(|(_, w)| w.recoverable_until);
        ways.into_iter()
            .map(|(name, w)| {
                let mut line = format!("{name}: recoverable {}", w.describe_at_guard());
                if let Some(because) = &w.estimate_because {
                    line.push_str(&format!(", an estimate: {because}"));
                }
                line
            })
            .collect()
    }

    /// [`GuardReport::ways_back`] under a heading, for the summary.
    fn way_back_lines(&self) -> String {
        let ways = self.ways_back();
        if ways.is_empty() {
            return String::new();
        }
        let mut out = String::from("\n  way back (the shortest first):");
        for line in ways {
            out.push_str(&format!("\n    {line}"));
        }
        out
    }

    /// The shortest way back of the tagged VPGs.
    pub(crate) fn shortest_way_back(vpgs: &[VpgGuard]) -> Option<DateTime<Utc>> {
        vpgs.iter()
            .filter_map(|v| v.way_back.as_ref())
            .map(|w| w.recoverable_until)
            .min()
    }

    /// The class of a guard that is not `guarded`, for exit codes and error results; `None` when it
    /// is. A verdict that could not be journaled makes it `internal`; a failed insert task makes it
    /// `task_failed`; otherwise an error around an insert gives its
    /// own kind (the first such VPG's: a ZVM that refused the insert is `refused`, one that could not be
    /// reached is `connection`); tasks still running when the deadline came make it `still_running` (they
    /// were not stopped and have not failed); a VM with no protecting VPG is `refused` by the rule that
    /// only protecting VPGs are tagged.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        let outcomes = || self.vpgs.iter().map(|v| &v.outcome);
        if self.journal_error.is_some() {
            return Some(ErrorKind::Internal);
        }
        match self.verdict {
            Verdict::Guarded => None,
            Verdict::StillRunning => Some(ErrorKind::StillRunning),
            Verdict::NotGuarded => {
                if outcomes().any(|o| matches!(o, Outcome::Failed { .. })) {
                    return Some(ErrorKind::TaskFailed);
                }
                let error = outcomes().find_map(|o| match o {
                    Outcome::Error { problem } => Some(problem.kind()),
                    _ => None,
                });
                Some(error.unwrap_or(ErrorKind::Refused))
            }
        }
    }

    /// What went wrong, in short lines naming the VPGs: one line for the VPGs that met the same
    /// cause at their ZVM ("VPGs web-dr, web-local: nothing listens at URL, after their inserts were
    /// sent"), one per VPG otherwise ([`VpgGuard::problem`]); empty when the guard is `guarded` or no
    /// VPG is protecting.
    pub fn problems(&self) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        let mut shared: Vec<(&str, Vec<&VpgGuard>)> = Vec::new();
        for v in &self.vpgs {
            let cause = match &v.outcome {
                Outcome::Error { problem } => problem.cause(),
                _ => None,
            };
            match cause {
                Some(cause) => match shared.iter_mut().find(|(c, _)| *c == cause) {
                    Some((_, vpgs)) => vpgs.push(v),
                    None => shared.push((cause, vec![v])),
                },
                None => lines.extend(v.problem()),
            }
        }
        let grouped = shared.into_iter().map(|(cause, vpgs)| {
            let names: Vec<&str> = vpgs.iter().map(|v| v.vpg_name.as_str()).collect();
            let sent = vpgs.iter().any(|v| v.outcome.task_id().is_some());
            let after = if sent {
                ", after their inserts were sent"
            } else {
                ""
            };
            match names.as_slice() {
                [one] => format!(
                    "VPG {one}: {cause}{}",
                    after.replace("their inserts were", "its insert was")
                ),
                many => format!("VPGs {}: {cause}{after}", many.join(", ")),
            }
        });
        grouped.chain(lines).collect()
    }

    /// What to do next after a guard that is not `guarded`; `None` when it is.
    pub fn next(&self) -> Option<GuardNext> {
        if self.journal_error.is_some() {
            return Some(GuardNext::FixJournal);
        }
        match self.verdict {
            Verdict::Guarded => None,
            Verdict::StillRunning => Some(GuardNext::ListTagsLater),
            Verdict::NotGuarded => Some(self.next_when_not_guarded()),
        }
    }

    fn next_when_not_guarded(&self) -> GuardNext {
        let mut sites: Vec<String> = Vec::new();
        for v in &self.vpgs {
            if let Outcome::Error { problem } = &v.outcome
                && problem.kind() == ErrorKind::Connection
                && !sites.contains(&v.site)
            {
                sites.push(v.site.clone());
            }
        }
        if !sites.is_empty() {
            return GuardNext::AgainOnceAnswering { sites };
        }
        if self.vpgs.iter().any(|v| v.problem().is_some()) {
            return GuardNext::AgainAfterLooking;
        }
        let syncing: Vec<String> = self
            .vpgs
            .iter()
            .filter(
                |v| matches!(&v.outcome, Outcome::Skipped { reason } if reason.contains("syncing")),
            )
            .map(|v| v.vpg_name.clone())
            .collect();
        match syncing.is_empty() {
            true => GuardNext::NothingToTag,
            false => GuardNext::AgainAfterSync { vpgs: syncing },
        }
    }

    /// The task ids still running, for a caller that wants to follow them.
    pub fn running_task_ids(&self) -> Vec<&str> {
        self.vpgs
            .iter()
            .filter_map(|v| match &v.outcome {
                Outcome::StillRunning { task_id, .. } => Some(task_id.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// `guarded` only when at least one VPG is protecting and every protecting VPG was tagged; any failure or
/// error makes it `not_guarded`; otherwise work still running makes it `still_running`.
pub fn verdict(vpgs: &[VpgGuard]) -> Verdict {
    let protecting: Vec<&Outcome> = vpgs
        .iter()
        .map(|v| &v.outcome)
        .filter(|o| !matches!(o, Outcome::Skipped { .. }))
        .collect();
    if protecting.is_empty() {
        return Verdict::NotGuarded;
    }
    if protecting
        .iter()
        .all(|o| matches!(o, Outcome::Tagged { .. }))
    {
        return Verdict::Guarded;
    }
    if protecting
        .iter()
        .any(|o| matches!(o, Outcome::Failed { .. } | Outcome::Error { .. }))
    {
        return Verdict::NotGuarded;
    }
    Verdict::StillRunning
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::problem::Met;

    fn vg(outcome: Outcome) -> VpgGuard {
        VpgGuard {
            vpg_id: "id".into(),
            vpg_name: "n".into(),
            site: "s".into(),
            outcome,
            way_back: None,
            notes: vec![],
        }
    }

    /// A report of web-01 with `verdict` and no VPG.
    fn report_of(verdict: Verdict) -> GuardReport {
        GuardReport {
            verdict,
            tag: "t".into(),
            vm: crate::vm::VmRef {
                id: "s.vm-1".into(),
                name: "web-01".into(),
                site: crate::vm::SiteRef {
                    id: "s".into(),
                    name: "Boston".into(),
                    configured_as: Some("boston".into()),
                },
                ip_addresses: vec![],
            },
            agent: "claude-code".into(),
            person: None,
            action: "edit".into(),
            change_id: "c-1".into(),
            vpgs: vec![],
            recoverable_until: None,
            elapsed_ms: 0,
            notes: vec![],
            attempt_id: "a".into(),
            takes_over: None,
            sites: None,
            journal_error: None,
        }
    }

    fn tagged() -> Outcome {
        Outcome::Tagged {
            task_id: Some("t".into()),
            task_state: Some(Code::task_state(6)),
            checkpoint_id: "1".into(),
            timestamp: None,
        }
    }

    #[test]
    fn verdict_is_guarded_only_when_every_protecting_vpg_was_tagged() {
        let skipped = || Outcome::Skipped {
            reason: "syncing".into(),
        };
        let running = || Outcome::StillRunning {
            task_id: "t".into(),
            task_state: None,
            stage: Stage::Running,
        };
        let failed = || Outcome::Failed {
            task_id: "t".into(),
            task_state: Code::task_state(4),
            complete_reason: "x".into(),
        };
        assert_eq!(verdict(&[vg(tagged()), vg(skipped())]), Verdict::Guarded);
        assert_eq!(verdict(&[vg(skipped())]), Verdict::NotGuarded);
        assert_eq!(verdict(&[]), Verdict::NotGuarded);
        assert_eq!(
            verdict(&[vg(tagged()), vg(running())]),
            Verdict::StillRunning
        );
        assert_eq!(verdict(&[vg(failed()), vg(running())]), Verdict::NotGuarded);
        assert_eq!(
            verdict(&[vg(tagged()), vg(VpgProblem::DeadlineBeforeInsert.into())]),
            Verdict::NotGuarded
        );
    }

    #[test]
    fn vpgs_that_met_one_cause_are_named_once_with_it_and_the_next_step_waits_for_their_site() {
        let lost = |name: &str| VpgGuard {
            vpg_name: name.into(),
            site: "boston".into(),
            ..vg(VpgProblem::Unfollowed {
                task_id: format!("task-of-{name}"),
                met: Met {
                    kind: ErrorKind::Connection,
                    said: "nothing listens at http://zvm:443/v1/tasks".into(),
                    brief: "nothing listens at http://zvm:443".into(),
                },
            }
            .into())
        };
        let report = GuardReport {
            vpgs: vec![lost("web-dr"), lost("web-local")],
            ..report_of(Verdict::NotGuarded)
        };
        assert_eq!(
            report.problems(),
            [
                "VPGs web-dr, web-local: nothing listens at http://zvm:443, after their inserts were sent"
            ]
        );
        assert_eq!(
            report.next(),
            Some(GuardNext::AgainOnceAnswering {
                sites: vec!["boston".into()]
            })
        );
    }

    #[test]
    fn each_vpg_neither_tagged_nor_skipped_is_a_problem_naming_it() {
        let named = |name: &str, outcome| VpgGuard {
            vpg_name: name.into(),
            ..vg(outcome)
        };
        let vpgs = [
            named("web-local", tagged()),
            named(
                "files-dr",
                Outcome::Skipped {
                    reason: "syncing".into(),
                },
            ),
            named(
                "web-dr",
                Outcome::Failed {
                    task_id: "t-4".into(),
                    task_state: Code::task_state(4),
                    complete_reason: "another insert ran".into(),
                },
            ),
            named(
                "web-archive",
                VpgProblem::Refused {
                    met: Met {
                        kind: ErrorKind::Refused,
                        said: "HTTP 403".into(),
                        brief: "HTTP 403".into(),
                    },
                }
                .into(),
            ),
            named(
                "sql-local",
                Outcome::StillRunning {
                    task_id: "t-9".into(),
                    task_state: None,
                    stage: Stage::Running,
                },
            ),
        ];
        let problems: Vec<Option<String>> = vpgs.iter().map(VpgGuard::problem).collect();
        assert_eq!(problems[0], None);
        assert_eq!(problems[1], None);
        assert_eq!(
            problems[2].as_deref(),
            Some("VPG web-dr: task t-4 ended Failed (4): another insert ran")
        );
        assert_eq!(problems[3].as_deref(), Some("VPG web-archive: HTTP 403"));
        assert_eq!(
            problems[4].as_deref(),
            Some("VPG sql-local: task t-9 is still running (not stopped)")
        );
    }

    #[test]
    fn report_json_is_snake_case_with_a_flat_outcome() {
        let v = serde_json::to_value(vg(tagged())).unwrap();
        assert_eq!(v["outcome"], "tagged");
        assert_eq!(v["task_state"]["name"], "Completed");
        assert_eq!(v["checkpoint_id"], "1");
    }
}
