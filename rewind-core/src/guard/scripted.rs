//! The insert machine tested in-process through a scripted port, one row per way an insert goes:
//! what the ZVM answers, and what the machine must end with (its outcome, its notes, the inserts it
//! sent). The end-to-end tests against the simulator keep the wiring.

use std::sync::Mutex as StdMutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::insert::Place;
use super::record::{AttemptLog, Earlier};
use super::{GuardContext, GuardNote, Outcome, OwnTasks, VpgProblem, VpgQueue};
use crate::audit_journal::{AuditJournal, JournalOutcome, JournalRecord};
use crate::codes::Code;
use crate::config::GuardSettings;
use crate::error::{ErrorKind, RewindError};
use crate::progress::NoProgress;
use crate::protection::{FlrAvailability, SiteRef, VpgProtection};
use crate::way_back::VpgHistory;
use crate::zvm::port::{InsertPort, Sent};
use crate::zvm::timings::SiteTimings;
use crate::zvm::wire::{Checkpoint, Task};

const VPG: &str = "vpg-1";
const TAG: &str = "ai:me | edit | c-1";

/// What the scripted ZVM answers to each insert, in order.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    /// A task that ends Completed; its checkpoint is listed at once.
    Completes,
    /// A task that ends Failed because another client's insert ran.
    FailsBackToBack,
    /// A task that ends Failed for another reason.
    Fails,
    /// HTTP 400.
    Refused,
    /// The answer is lost; the insert happened (`true`) or not.
    Lost(bool),
}

/// A scripted ZVM of one VPG.
struct Script {
    answers: StdMutex<Vec<Answer>>,
    tasks: StdMutex<Vec<Task>>,
    checkpoints: StdMutex<Vec<Checkpoint>>,
    sent: StdMutex<u32>,
    /// The VPG's journal history in minutes, or `None` when reading it fails.
    history: Option<i64>,
    history_reads: StdMutex<u32>,
}

fn task(id: &str, state: i64, reason: &str, started: DateTime<Utc>) -> Task {
    serde_json::from_value(json!({
        "TaskIdentifier": id, "Type": "InsertTaggedCP", "Status": {"State": state, "Progress": 100},
        "InitiatedBy": "someone", "Started": started.to_rfc3339(),
        "Completed": (started + chrono::Duration::milliseconds(5)).to_rfc3339(),
        "CompleteReason": reason,
        "RelatedEntities": {"Vpgs": [{"Identifier": VPG}]},
    }))
    .expect("a task")
}

impl Script {
    fn new(answers: &[Answer]) -> Script {
        Script {
            answers: StdMutex::new(answers.iter().rev().copied().collect()),
            tasks: StdMutex::default(),
            checkpoints: StdMutex::default(),
            sent: StdMutex::new(0),
            history: Some(24 * 60),
            history_reads: StdMutex::new(0),
        }
    }

    /// A VPG whose journal keeps `minutes` of history, or whose history cannot be read (`None`).
    fn with_history(self, minutes: Option<i64>) -> Script {
        Script {
            history: minutes,
            ..self
        }
    }

    /// A task the ZVM already has, e.g. an earlier attempt's.
    fn with_task(self, id: &str, state: i64) -> Script {
        self.tasks
            .lock()
            .unwrap()
            .push(task(id, state, "", Utc::now()));
        self
    }

    fn with_tag_listed(self) -> Script {
        self.list();
        self
    }

    fn list(&self) {
        let cp = json!({"CheckpointIdentifier": "cp-1", "TimeStamp": Utc::now().to_rfc3339(), "Tag": TAG});
        let cp = serde_json::from_value(cp).expect("a checkpoint");
        self.checkpoints.lock().unwrap().push(cp);
    }

    fn sent(&self) -> u32 {
        *self.sent.lock().unwrap()
    }
}

fn refused() -> RewindError {
    RewindError::Zvm {
        site: "boston".into(),
        request: format!("POST /v1/vpgs/{VPG}/checkpoints"),
        status: 400,
        message: "no".into(),
        advice: String::new(),
    }
}

impl InsertPort for Script {
    fn site(&self) -> &str {
        "boston"
    }

    async fn running_inserts(&self, _: &str) -> Result<Vec<Task>, RewindError> {
        let tasks = self.tasks.lock().unwrap();
        Ok(tasks
            .iter()
            .filter(|t| t.state() == Some(1))
            .cloned()
            .collect())
    }

    async fn inserts(&self, _: &str) -> Result<Vec<Task>, RewindError> {
        Ok(self.tasks.lock().unwrap().clone())
    }

    async fn insert(&self, _: &str, _: &str) -> Result<Sent, RewindError> {
        *self.sent.lock().unwrap() += 1;
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop()
            .expect("an answer scripted");
        let id = format!("t-{}", self.sent());
        let (state, reason) = match answer {
            Answer::Refused => return Err(refused()),
            Answer::Lost(false) => return Ok(Sent::Unknown("no answer came back".into())),
            Answer::Completes | Answer::Lost(true) => (6, ""),
            Answer::FailsBackToBack => (4, "another insert of a checkpoint is in progress"),
            Answer::Fails => (4, "the VPG is paused"),
        };
        if state == 6 {
            self.list();
        }
        self.tasks
            .lock()
            .unwrap()
            .push(task(&id, state, reason, Utc::now()));
        match answer {
            Answer::Lost(true) => Ok(Sent::Unknown("no answer came back".into())),
            _ => Ok(Sent::Task(id)),
        }
    }

    async fn task(&self, task_id: &str) -> Result<Task, RewindError> {
        let tasks = self.tasks.lock().unwrap();
        let found = tasks
            .iter()
            .find(|t| t.task_identifier.as_deref() == Some(task_id));
        Ok(found.cloned().expect("a task the script knows"))
    }

    async fn history(&self, _: &str) -> Result<VpgHistory, RewindError> {
        *self.history_reads.lock().unwrap() += 1;
        let minutes = self.history.ok_or_else(|| RewindError::Zvm {
            site: "boston".into(),
            request: format!("GET /v1/vpgs/{VPG}"),
            status: 500,
            message: "down".into(),
            advice: String::new(),
        })?;
        Ok(VpgHistory {
            status: Some(1),
            configured_minutes: Some(minutes),
            actual_minutes: Some(minutes),
            earliest: Some(Utc::now() - chrono::Duration::minutes(minutes)),
            alerts: Vec::new(),
        })
    }

    async fn checkpoints_since(
        &self,
        _: &str,
        _: Option<DateTime<Utc>>,
    ) -> Result<Vec<Checkpoint>, RewindError> {
        Ok(self.checkpoints.lock().unwrap().clone())
    }
}

/// How the guard around the machine is set for a row.
#[derive(Clone, Copy)]
enum Around {
    Fresh,
    /// An earlier attempt of the change learnt this insert task.
    Earlier(&'static str),
    Stopped,
    PastDeadline,
}

/// What a row expects: the outcome's shape, the notes' kinds in order, the inserts sent.
struct Expect {
    outcome: fn(&Outcome) -> bool,
    notes: &'static [&'static str],
    sent: u32,
}

fn protection() -> VpgProtection {
    let boston = SiteRef {
        id: "s".into(),
        name: "Boston".into(),
        configured_as: Some("boston".into()),
    };
    VpgProtection {
        vpg_id: VPG.into(),
        vpg_name: "web".into(),
        status: Code::vpg_status(1),
        substatus: Code::vpg_substatus(0),
        protecting: true,
        reason: None,
        protected_site: boston.clone(),
        recovery_site: boston,
        locally_replicated: true,
        flr: FlrAvailability::Available {
            site: "boston".into(),
        },
        zvm_site: "boston".into(),
    }
}

fn note_kind(n: &GuardNote) -> &'static str {
    match n {
        GuardNote::EarlierInsertCompleted { .. } => "earlier_completed",
        GuardNote::EarlierInsertEnded { .. } => "earlier_ended",
        GuardNote::TagAlreadyListed { .. } => "tag_listed",
        GuardNote::OutcomeUnknown { .. } => "unknown",
        GuardNote::FoundAfterUnknown { .. } => "found_after_unknown",
        GuardNote::InsertingAgain { .. } => "again",
        GuardNote::BackToBack { .. } => "back_to_back",
        GuardNote::WaitedForRunning { .. } => "waited",
        GuardNote::WayBackUnknown { .. } => "way_back_unknown",
        GuardNote::ShortWayBack { .. } => "short_way_back",
        _ => "other",
    }
}

/// Runs one VPG's guard as the row sets it: the outcome, the way back and the notes.
async fn tag_as(
    script: &Script,
    around: Around,
) -> (Outcome, Option<crate::way_back::WayBack>, Vec<GuardNote>) {
    let dir = tempfile::tempdir().unwrap();
    let journal = AuditJournal::new(dir.path().join("journal.jsonl"));
    let (queue, own, stop) = (
        VpgQueue::default(),
        OwnTasks::default(),
        CancellationToken::new(),
    );
    let settings = GuardSettings::default();
    let ctx = GuardContext {
        sites: &[],
        left_out: &[],
        queue: &queue,
        own: &own,
        settings: &settings,
        journal: &journal,
        window: Duration::from_secs(600),
        person: None,
        stop: &stop,
    };
    let intent: JournalRecord = serde_json::from_value(json!({
        "time": Utc::now(), "kind": "guard", "agent": "me", "action": "edit", "change_id": "c-1",
        "vm": {"id": "vm-1", "name": "web-01", "site": "Boston"}, "verdict": "pending", "vpgs": [],
    }))
    .expect("an intent");
    let log = AttemptLog {
        fence: Default::default(),
        journal: &journal,
        intent,
        failures: StdMutex::default(),
    };
    let vpg = protection();
    let deadline = match around {
        Around::PastDeadline => Instant::now(),
        _ => Instant::now() + Duration::from_secs(20),
    };
    if let Around::Stopped = around {
        stop.cancel();
    }
    let earlier = match around {
        Around::Earlier(task_id) => Some(Earlier {
            attempt: "attempt 1".into(),
            at: Utc::now() - chrono::Duration::minutes(1),
            outcome: JournalOutcome::Sent,
            task_id: Some(task_id.into()),
        }),
        _ => None,
    };
    let at = Place {
        ctx: &ctx,
        vpg: &vpg,
        tag: TAG,
        log: &log,
        deadline,
        sent: tokio::sync::watch::Sender::new(false),
    };
    let timings = SiteTimings::new("boston");
    super::vpg::tag(at, script, &timings, earlier.as_ref(), &NoProgress).await
}

async fn check(name: &str, script: Script, around: Around, expect: Expect) {
    let (outcome, _, notes) = tag_as(&script, around).await;
    let kinds: Vec<&str> = notes.iter().map(note_kind).collect();
    assert!((expect.outcome)(&outcome), "{name}: {outcome:?}");
    assert_eq!(kinds, expect.notes, "{name}: the notes");
    assert_eq!(script.sent(), expect.sent, "{name}: the inserts sent");
}

fn tagged(o: &Outcome) -> bool {
    matches!(o, Outcome::Tagged { .. })
}

fn problem_kind(o: &Outcome, kind: ErrorKind) -> bool {
    matches!(o, Outcome::Error { problem } if problem.kind() == kind)
}

#[tokio::test]
async fn each_way_an_insert_goes_ends_as_the_table_says() {
    use Answer::*;
    let rows: Vec<(&str, Script, Around, Expect)> = vec![
        (
            "an insert that completes is tagged",
            Script::new(&[Completes]),
            Around::Fresh,
            Expect {
                outcome: tagged,
                notes: &[],
                sent: 1,
            },
        ),
        (
            "a refused insert ends the VPG with the ZVM's error",
            Script::new(&[Refused]),
            Around::Fresh,
            Expect {
                outcome: |o| problem_kind(o, ErrorKind::Refused),
                notes: &[],
                sent: 1,
            },
        ),
        (
            "a task that fails for its own reason is failed, not retried",
            Script::new(&[Fails]),
            Around::Fresh,
            Expect {
                outcome: |o| matches!(o, Outcome::Failed { .. }),
                notes: &[],
                sent: 1,
            },
        ),
        (
            "a back-to-back failure is retried",
            Script::new(&[FailsBackToBack, Completes]),
            Around::Fresh,
            Expect {
                outcome: tagged,
                notes: &["back_to_back"],
                sent: 2,
            },
        ),
        (
            "a lost answer whose insert happened is found, not sent again",
            Script::new(&[Lost(true)]),
            Around::Fresh,
            Expect {
                outcome: tagged,
                notes: &["unknown", "found_after_unknown"],
                sent: 1,
            },
        ),
        (
            "a lost answer whose insert did not happen is sent again",
            Script::new(&[Lost(false), Completes]),
            Around::Fresh,
            Expect {
                outcome: tagged,
                notes: &["unknown", "again"],
                sent: 2,
            },
        ),
        (
            "an earlier attempt's completed insert is adopted",
            Script::new(&[]).with_task("t-0", 6).with_tag_listed(),
            Around::Earlier("t-0"),
            Expect {
                outcome: tagged,
                notes: &["earlier_completed"],
                sent: 0,
            },
        ),
        (
            "an earlier attempt's failed insert is looked past, then inserted",
            Script::new(&[Completes]).with_task("t-0", 4),
            Around::Earlier("t-0"),
            Expect {
                outcome: tagged,
                notes: &["earlier_ended"],
                sent: 1,
            },
        ),
        (
            "a guard told to stop sends nothing",
            Script::new(&[]),
            Around::Stopped,
            Expect {
                outcome: |o| matches!(o, Outcome::Error { problem } if *problem == VpgProblem::Stopped { vpg: "web".into() }),
                notes: &[],
                sent: 0,
            },
        ),
        (
            "a deadline already past sends nothing",
            Script::new(&[]),
            Around::PastDeadline,
            Expect {
                outcome: |o| matches!(o, Outcome::Error { problem } if *problem == VpgProblem::DeadlineBeforeInsert),
                notes: &[],
                sent: 0,
            },
        ),
    ];
    for (name, script, around, expect) in rows {
        check(name, script, around, expect).await;
    }
}

#[test]
fn an_insert_is_learnt_by_the_zvms_clock_not_by_when_the_client_saw_it_end() {
    use super::insert::zvm_duration;
    let task = |started: &str, completed: Option<&str>| Task {
        started: crate::zvm::wire::parse_time(started),
        completed: completed.and_then(crate::zvm::wire::parse_time),
        ..Task::default()
    };
    assert_eq!(
        zvm_duration(&task(
            "2026-01-01T00:00:00.000Z",
            Some("2026-01-01T00:00:00.047Z")
        )),
        Some(Duration::from_millis(47))
    );
    assert_eq!(zvm_duration(&task("2026-01-01T00:00:00.000Z", None)), None);
    assert_eq!(
        zvm_duration(&task(
            "2026-01-01T00:00:01.000Z",
            Some("2026-01-01T00:00:00.000Z")
        )),
        None,
        "a completion before the start is not learnt"
    );
}

/// What a row expects of the way back: how long it lasts (in minutes), the notes, the history
/// reads.
struct WayBackExpect {
    lasts: Option<i64>,
    notes: &'static [&'static str],
    reads: u32,
}

#[tokio::test]
async fn the_way_back_is_read_through_the_port_once_zerto_has_the_insert() {
    let day = Some(24 * 60);
    let rows: Vec<(&str, Script, Around, WayBackExpect)> = vec![
        (
            "a tag inserted lasts the VPG's history",
            Script::new(&[Answer::Completes]),
            Around::Fresh,
            WayBackExpect {
                lasts: day,
                notes: &[],
                reads: 1,
            },
        ),
        (
            "a history shorter than the minimum way back is said",
            Script::new(&[Answer::Completes]).with_history(Some(60)),
            Around::Fresh,
            WayBackExpect {
                lasts: Some(60),
                notes: &["short_way_back"],
                reads: 1,
            },
        ),
        (
            "a history that cannot be read leaves the tag without a way back, and says so",
            Script::new(&[Answer::Completes]).with_history(None),
            Around::Fresh,
            WayBackExpect {
                lasts: None,
                notes: &["way_back_unknown"],
                reads: 1,
            },
        ),
        (
            "an insert the ZVM refused asks no history",
            Script::new(&[Answer::Refused]),
            Around::Fresh,
            WayBackExpect {
                lasts: None,
                notes: &[],
                reads: 0,
            },
        ),
        (
            "a tag an earlier attempt left is given its way back too",
            Script::new(&[]).with_task("t-0", 6).with_tag_listed(),
            Around::Earlier("t-0"),
            WayBackExpect {
                lasts: day,
                notes: &["earlier_completed"],
                reads: 1,
            },
        ),
    ];
    for (name, script, around, expect) in rows {
        let (_, way_back, notes) = tag_as(&script, around).await;
        let lasts = way_back.map(|w| w.lasts().num_minutes());
        assert_eq!(lasts, expect.lasts, "{name}: the way back");
        let kinds: Vec<&str> = notes.iter().map(note_kind).collect();
        assert_eq!(kinds, expect.notes, "{name}: the notes");
        let reads = *script.history_reads.lock().unwrap();
        assert_eq!(reads, expect.reads, "{name}: the history reads");
    }
}
