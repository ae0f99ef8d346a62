//! `rewind tags --expiring WITHIN` and `rewind done <change-id>`: watching how long the open changes
//! can be rewound, and closing one on a person's word. Both read the journal alone.

use chrono::{Duration, Utc};
use rewind_core::audit_journal::{Closed, Expiring};
use rewind_core::way_back::{from_now, span};
use rewind_core::{AuditJournal, ErrorKind, Person};

use crate::exit::CliError;
use crate::output::{Reply, Table};

/// `rewind tags --expiring WITHIN`: the open changes whose way back ends within the span, soonest
/// first; refused (exit 3) when there is any, so a cron job or a script notices.
pub fn expiring(journal: &AuditJournal, within: Duration) -> Result<Reply, CliError> {
    let found = journal.expiring(within, Utc::now())?;
    let reply = Reply::new(&found, expiring_text(&found))?;
    if found.changes.is_empty() {
        return Ok(reply);
    }
    Ok(reply.failed(
        ErrorKind::Refused,
        format!(
            "the way back of {} open change(s) ends within {}: keep their tags (`rewind keep`) or say they are done (`rewind done <change-id>`)",
            found.changes.len(),
            span(within)
        ),
    ))
}

/// The open changes as people read them.
fn expiring_text(found: &Expiring) -> String {
    let within = span(Duration::minutes(found.within_minutes));
    if found.changes.is_empty() {
        return format!("no open change's way back ends within {within}\n");
    }
    let mut out = format!(
        "{} open change(s) whose way back ends within {within}:\n\n",
        found.changes.len()
    );
    let mut t = Table::new(&[
        "CHANGE",
        "VM",
        "AGENT",
        "GUARDED",
        "RECOVERABLE UNTIL",
        "LEFT",
        "SHORTEST AT",
    ]);
    for c in &found.changes {
        let about = if c.estimate { "about " } else { "" };
        t.row(vec![
            c.change_id.clone(),
            c.vm.to_string(),
            match &c.person {
                Some(p) => format!("{} for {p}", c.agent),
                None => c.agent.clone(),
            },
            c.guarded_at.format("%Y-%m-%d %H:%M UTC").to_string(),
            format!(
                "{about}{}",
                c.recoverable_until.format("%Y-%m-%d %H:%M UTC")
            ),
            from_now(c.recoverable_until - found.now),
            c.vpg_name.clone(),
        ]);
    }
    out.push_str(&t.render());
    out
}

/// `rewind done <change-id>`: closes the change on the word of the person at this machine.
pub fn done(journal: &AuditJournal, change_id: &str) -> Result<Reply, CliError> {
    let change_id = change_id.trim();
    let person = Person::local();
    let Some(closed) = journal.close(change_id, person.as_ref(), Utc::now())? else {
        return Err(CliError::new(
            ErrorKind::Refused,
            format!(
                "no guard of change {change_id:?} is in the journal {} in the last 30 days; `rewind journal --change <id>` shows the changes it holds",
                journal.path().display()
            ),
        ));
    };
    Reply::new(&closed, done_text(&closed))
}

/// What `done` closed, as people read it.
fn done_text(c: &Closed) -> String {
    let names = |vms: &[rewind_core::audit_journal::JournalVm]| {
        vms.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::new();
    if !c.vms.is_empty() {
        out.push_str(&format!(
            "change {} is done on {}: its way back is no longer watched (its tags stay in Zerto until they age out)\n",
            c.change_id,
            names(&c.vms)
        ));
    }
    if !c.already.is_empty() {
        out.push_str(&format!(
            "change {} was already done on {}\n",
            c.change_id,
            names(&c.already)
        ));
    }
    out
}
