//! The record model: one line of the journal (a guard's intent, task and verdict lines, a
//! recovery, a keep, a done, a protection change), the VM and VPGs it names, the person it was made
//! for, and the tags guards pinned as records say.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::verdict::{JournalOutcome, JournalVerdict};
use crate::vm::{VmQuery, VmRef};
use crate::way_back::JournaledTag;

/// What a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// A guard.
    Guard,
    /// A bounded recover (FLR, failover test, clone).
    Recovery,
    /// A person's word that a change is done: its way back is no longer watched.
    Done,
    /// A change's tags kept past the journal, in retention sets (Extended Journal Copy).
    Keep,
    /// The VPGs a VM is in differ from those its newest guard saw: a VPG was added (untagged) or
    /// removed (with its checkpoints) after the guard.
    ProtectionChanged,
    /// A call the gateway forwarded to an upstream's mutating tool under a guard of its change:
    /// written before it was sent, and again when its end was known.
    Call,
}

impl std::fmt::Display for RecordKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecordKind::Guard => "guard",
            RecordKind::Recovery => "recovery",
            RecordKind::Done => "done",
            RecordKind::Keep => "keep",
            RecordKind::ProtectionChanged => "protection_changed",
            RecordKind::Call => "call",
        })
    }
}

/// The VM of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JournalVm {
    /// Its identifier.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its IP addresses when the record was written, so a VM named by an address (as a tool's
    /// argument may name it) is recognised without asking a ZVM. Absent when it had none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<String>,
    /// The name of the site it runs at, so a human tells apart two VMs of one name by where they
    /// run.
    pub site: String,
}

impl JournalVm {
    /// Whether `query` means this VM, as find_protection matches a query: its identifier, its name
    /// (any case), its host name's first label, or one of its addresses.
    pub fn answers_to(&self, query: &VmQuery) -> bool {
        query.matches(
            Some(&self.id),
            Some(&self.name),
            self.ip_addresses.iter().map(String::as_str),
        )
    }
}

impl From<&VmRef> for JournalVm {
    fn from(vm: &VmRef) -> Self {
        JournalVm {
            id: vm.id.clone(),
            name: vm.name.clone(),
            ip_addresses: vm.ip_addresses.clone(),
            site: vm.site.name.clone(),
        }
    }
}

/// One VPG's line of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JournalVpg {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// What came of it.
    pub outcome: JournalOutcome,
    /// The tag written (or recovered from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The Zerto task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The task's state, e.g. `Completed (6)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<String>,
    /// The checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
    /// The reason of a skip, a failure's `CompleteReason`, or an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The checkpoint's time (the ZVM's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_time: Option<DateTime<Utc>>,
    /// How long the tag was to stay recoverable, as said at guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub way_back: Option<crate::way_back::WayBack>,
    /// The retention set a keep copied the tag's checkpoint into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<crate::way_back::KeptSet>,
}

/// The signed-in person an agent acted for: the caller of a team server (`rewind-mcp --http` with
/// `[http.auth]`), as their access token names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Person {
    /// The token's subject (`sub`): the identity provider's lasting id of the person.
    pub subject: String,
    /// Their name as the token gives it (`preferred_username`, else `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Person {
    /// The person at this machine: the login name of the user running the process, at this host
    /// (`local:alice@laptop`), for guards and recoveries made by the CLI or a server on stdio.
    /// `None` when the user cannot be told.
    pub fn local() -> Option<Person> {
        let user = local_user()?;
        let host = local_host().unwrap_or_else(|| "localhost".to_owned());
        Some(Person {
            subject: format!("local:{user}@{host}"),
            name: Some(user),
        })
    }

    /// Whether `who` names this person: their subject exactly, or their name in any case.
    pub fn answers_to(&self, who: &str) -> bool {
        let who = who.trim();
        self.subject == who
            || self
                .name
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case(who))
    }
}

/// The login name of the user running this process.
fn local_user() -> Option<String> {
    #[cfg(unix)]
    {
        let uid = nix::unistd::Uid::current();
        if let Ok(Some(user)) = nix::unistd::User::from_uid(uid) {
            return Some(user.name);
        }
    }
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.trim().is_empty()))
}

/// This machine's host name.
fn local_host() -> Option<String> {
    #[cfg(unix)]
    {
        if let Ok(name) = nix::unistd::gethostname() {
            return name.into_string().ok().filter(|n| !n.is_empty());
        }
    }
    std::env::var("COMPUTERNAME").ok()
}

impl std::fmt::Display for Person {
    /// `alice (4f1c…)`: the name, then the subject; the subject alone when there is no name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name} ({})", self.subject),
            None => f.write_str(&self.subject),
        }
    }
}

/// One record of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JournalRecord {
    /// When it was written.
    pub time: DateTime<Utc>,
    /// Guard or recovery.
    pub kind: RecordKind,
    /// Who acted: the agent's own name (for a recovery, the one it was made as, else the ZVM
    /// account).
    pub agent: String,
    /// The person the agent acted for: the signed-in caller of a team server, or the person at
    /// this machine. Absent when neither is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// What they did.
    pub action: String,
    /// The change id.
    pub change_id: String,
    /// The VM.
    pub vm: JournalVm,
    /// The verdict: a guard's or a recovery's.
    pub verdict: JournalVerdict,
    /// Each VPG.
    pub vpgs: Vec<JournalVpg>,
    // Each note is the sentence a guard's or a recovery's typed note displays: the journal is read
    // by people, and by later versions, whose notes may differ. (Not a doc comment: that would
    // change the published JSON Schema.)
    /// Notes: retries, reconciliations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Kind-specific details (a recovery's files, target and so on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// The guard attempt this line belongs to and what part of it the line records. Absent from
    /// recoveries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<Attempt>,
    /// The configured sites the VM was looked up at, when not every configured site was (some left
    /// out with `--site`, or down while the VM was found by its identifier). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sites: Option<Vec<String>>,
    /// The held call whose approval this was made on, and who approved it. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<ApprovedBy>,
}

/// Who approved a held call a record was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApprovedBy {
    /// The held call.
    pub approval_id: String,
    /// The person who approved it.
    pub person: Person,
}

/// One attempt of a guard, as its lines in the journal name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attempt {
    /// The attempt's id, shared by all its lines.
    pub id: String,
    /// What this line records; in a record [`AuditJournal::read`] gives back, the attempt's last line.
    pub phase: Phase,
    /// The attempt of the same VM and change that this one took over, when it adopted what that
    /// one had inserted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub takes_over: Option<String>,
    /// In a record read back: the attempt that later took this one over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_over_by: Option<String>,
}

/// The part of a guard attempt one journal line records, in the order they are written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Written before the first insert: the tag, and each protecting VPG (outcome `pending`).
    Intent,
    /// One insert task's id, learnt from the ZVM's answer (outcome `sent`).
    Sent,
    /// The guard's verdict, with every VPG's outcome.
    Verdict,
    /// A part of a newer version, kept as written; this version never writes one. Read back, it
    /// adds what it says of its VPGs to the attempt, and ends nothing.
    #[serde(untagged)]
    Other(String),
}

impl JournalVpg {
    /// A line for `vpg` with `outcome` and nothing else yet.
    pub fn new(vpg_id: &str, vpg_name: &str, outcome: JournalOutcome) -> JournalVpg {
        JournalVpg {
            vpg_id: vpg_id.to_string(),
            vpg_name: vpg_name.to_string(),
            outcome,
            tag: None,
            task_id: None,
            task_state: None,
            checkpoint_id: None,
            detail: None,
            checkpoint_time: None,
            way_back: None,
            kept: None,
        }
    }
}

/// What a guard is about to do, for its intent line ([`JournalRecord::intent`]).
#[derive(Debug, Clone)]
pub struct GuardIntent<'a> {
    /// The attempt's id.
    pub attempt_id: &'a str,
    /// The attempt it takes over, if any.
    pub takes_over: Option<&'a str>,
    /// The agent.
    pub agent: &'a str,
    /// The person the agent acts for, if signed in.
    pub person: Option<&'a Person>,
    /// The action.
    pub action: &'a str,
    /// The change id.
    pub change_id: &'a str,
    /// The VM.
    pub vm: &'a VmRef,
    /// The tag about to be inserted.
    pub tag: &'a str,
    /// The sites the VM was looked up at, when not every configured site was.
    pub sites: Option<&'a [String]>,
    /// The protecting VPGs it is about to be inserted into: (identifier, name).
    pub vpgs: Vec<(&'a str, &'a str)>,
}

impl JournalRecord {
    /// The intent line of a guard, written before its first insert is sent: every VPG it is about to
    /// insert into is `pending`, since from then on the insert may have been sent.
    pub fn intent(i: &GuardIntent<'_>) -> JournalRecord {
        JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Guard,
            agent: i.agent.to_string(),
            person: i.person.cloned(),
            action: i.action.to_string(),
            change_id: i.change_id.to_string(),
            vm: JournalVm::from(i.vm),
            verdict: JournalVerdict::Started,
            vpgs: i
                .vpgs
                .iter()
                .map(|(id, name)| JournalVpg {
                    tag: Some(i.tag.to_string()),
                    ..JournalVpg::new(id, name, JournalOutcome::Pending)
                })
                .collect(),
            notes: Vec::new(),
            details: None,
            sites: i.sites.map(<[String]>::to_vec),
            attempt: Some(Attempt {
                id: i.attempt_id.to_string(),
                phase: Phase::Intent,
                takes_over: i.takes_over.map(str::to_string),
                taken_over_by: None,
            }),
            approved_by: None,
        }
    }

    /// The line of an insert task whose id a guard learnt, from that guard's intent line.
    pub fn sent(intent: &JournalRecord, vpg_id: &str, task_id: &str) -> JournalRecord {
        let vpg = intent.vpgs.iter().find(|v| v.vpg_id == vpg_id);
        let mut line = JournalVpg::new(
            vpg_id,
            vpg.map_or(vpg_id, |v| v.vpg_name.as_str()),
            JournalOutcome::Sent,
        );
        line.tag = vpg.and_then(|v| v.tag.clone());
        line.task_id = Some(task_id.to_string());
        JournalRecord {
            time: Utc::now(),
            vpgs: vec![line],
            attempt: intent.attempt.as_ref().map(|a| Attempt {
                phase: Phase::Sent,
                takes_over: None,
                ..a.clone()
            }),
            ..intent.clone()
        }
    }

    /// The tag this guard record inserted (or was about to), from its VPG lines.
    pub fn tag(&self) -> Option<&str> {
        self.vpgs.iter().find_map(|v| v.tag.as_deref())
    }

    /// The tagged checkpoints this record says a guard pinned: its VPG lines that ended tagged
    /// with a checkpoint. None for a recovery.
    pub fn journaled_tags(&self) -> impl Iterator<Item = JournaledTag> + '_ {
        let guard = self.kind == RecordKind::Guard;
        self.vpgs
            .iter()
            .filter(move |v| guard && v.outcome == JournalOutcome::Tagged)
            .filter_map(|v| {
                Some(JournaledTag {
                    vpg_id: v.vpg_id.clone(),
                    vpg_name: v.vpg_name.clone(),
                    checkpoint_id: v.checkpoint_id.clone()?,
                    checkpoint_time: v.checkpoint_time,
                    tag: v.tag.clone()?,
                    guarded_at: self.time,
                    way_back: v.way_back.clone(),
                    kept: None,
                })
            })
    }
}

/// The tagged checkpoints guards pinned, as `records` say, each once (the latest record of it),
/// with the retention set a later keep copied it into.
pub fn journaled_tags(records: &[JournalRecord]) -> Vec<JournaledTag> {
    let mut out: Vec<JournaledTag> = Vec::new();
    for tag in records.iter().flat_map(JournalRecord::journaled_tags) {
        out.retain(|t| !(t.vpg_id == tag.vpg_id && t.checkpoint_id == tag.checkpoint_id));
        out.push(tag);
    }
    let kept = records
        .iter()
        .filter(|r| r.kind == RecordKind::Keep)
        .flat_map(|r| &r.vpgs);
    for line in kept {
        let (Some(set), Some(checkpoint)) = (&line.kept, &line.checkpoint_id) else {
            continue;
        };
        if let Some(tag) = out
            .iter_mut()
            .find(|t| t.vpg_id == line.vpg_id && &t.checkpoint_id == checkpoint)
        {
            tag.kept = Some(set.clone());
        }
    }
    out
}

impl std::fmt::Display for JournalVm {
    /// `build-agent at Boston (s1.vm-3, 10.0.0.5)`: the name and site, then the identifier and
    /// addresses that tell it from another VM of the same name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {} ({}", self.name, self.site, self.id)?;
        for ip in &self.ip_addresses {
            write!(f, ", {ip}")?;
        }
        f.write_str(")")
    }
}
