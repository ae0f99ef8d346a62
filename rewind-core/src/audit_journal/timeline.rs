//! The journal as a timeline of changes: for each change of each VM, oldest first, who guarded it
//! and for whom, and every step after (guards, recoveries, restores, keeps, done) with its verdict.
//! What `rewind journal --timeline` prints and a team server's page shows.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::record::{JournalRecord, RecordKind};
use super::verdict::JournalVerdict;

/// The changes of a journal read, oldest first.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Timeline {
    /// One line per change of a VM.
    pub changes: Vec<ChangeLine>,
}

/// One change of one VM, and every step of it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChangeLine {
    /// The change id.
    pub change_id: String,
    /// The VM's name.
    pub vm: String,
    /// Its identifier.
    pub vm_id: String,
    /// The people its steps were taken for (their subjects), in the order they first appear.
    pub people: Vec<String>,
    /// The agents that took them, in the order they first appear.
    pub agents: Vec<String>,
    /// When its first step was journaled.
    pub began: DateTime<Utc>,
    /// Its steps, oldest first.
    pub steps: Vec<TimelineStep>,
}

/// One step of a change.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TimelineStep {
    /// When.
    pub time: DateTime<Utc>,
    /// A guard, a recovery, a keep, a done.
    pub kind: RecordKind,
    /// What was done.
    pub action: String,
    /// How it ended.
    pub verdict: JournalVerdict,
    /// Who took it.
    pub agent: String,
    /// For whom (a subject), when the record names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// How many VPGs it acted on.
    pub vpgs: usize,
}

impl Timeline {
    /// The timeline of `records` (oldest first, as a journal read gives them).
    pub fn of(records: &[JournalRecord]) -> Timeline {
        let mut changes: Vec<ChangeLine> = Vec::new();
        // Where each (change, VM) is in `changes`: a month of a team server's journal is read
        // for every look at its page.
        let mut at: HashMap<(&str, &str), usize> = HashMap::new();
        for r in records {
            let i = *at
                .entry((r.change_id.as_str(), r.vm.id.as_str()))
                .or_insert_with(|| {
                    changes.push(ChangeLine {
                        change_id: r.change_id.clone(),
                        vm: r.vm.name.clone(),
                        vm_id: r.vm.id.clone(),
                        people: Vec::new(),
                        agents: Vec::new(),
                        began: r.time,
                        steps: Vec::new(),
                    });
                    changes.len() - 1
                });
            changes[i].add(r);
        }
        changes.sort_by_key(|c| c.began);
        Timeline { changes }
    }
}

impl ChangeLine {
    fn add(&mut self, r: &JournalRecord) {
        let person = r.person.as_ref().map(|p| p.subject.clone());
        if let Some(p) = &person
            && !self.people.contains(p)
        {
            self.people.push(p.clone());
        }
        if !self.agents.contains(&r.agent) {
            self.agents.push(r.agent.clone());
        }
        self.began = self.began.min(r.time);
        self.steps.push(TimelineStep {
            time: r.time,
            kind: r.kind,
            action: r.action.clone(),
            verdict: r.verdict.clone(),
            agent: r.agent.clone(),
            person,
            vpgs: r.vpgs.len(),
        });
    }

    /// Whether a person said the change is done.
    pub fn closed(&self) -> bool {
        self.steps.iter().any(|s| s.kind == RecordKind::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::intent_days_ago;
    use super::*;

    #[test]
    fn steps_gather_under_their_change_and_vm_oldest_change_first() {
        let mut older = intent_days_ago("db-01", "c0", 2);
        older.verdict = JournalVerdict::Guarded;
        let mut recovery = intent_days_ago("web-01", "c1", 0);
        recovery.kind = RecordKind::Recovery;
        recovery.action = "recover_file sda1/etc/app/app.conf".into();
        recovery.verdict = JournalVerdict::Recovered;
        recovery.agent = "ops".into();
        let records = vec![
            intent_days_ago("web-01", "c1", 1),
            older,
            recovery,
            intent_days_ago("db-01", "c1", 0),
        ];
        let t = Timeline::of(&records);
        let heads: Vec<(&str, &str, usize)> = t
            .changes
            .iter()
            .map(|c| (c.change_id.as_str(), c.vm.as_str(), c.steps.len()))
            .collect();
        assert_eq!(
            heads,
            [("c0", "db-01", 1), ("c1", "web-01", 2), ("c1", "db-01", 1)]
        );
        assert_eq!(t.changes[1].agents, ["claude", "ops"]);
        assert_eq!(t.changes[1].steps[1].verdict, JournalVerdict::Recovered);
        assert!(!t.changes[1].closed());
    }
}
