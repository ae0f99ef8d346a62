//! Watching the ways back on a team server: `GET /v1/expiring?within=2h` answers the open changes of
//! its journal whose way back ends within the span (as `rewind tags --expiring` does on a machine),
//! and a watcher logs each open change once when its way back comes within `[guard]
//! min_way_back_hours` of its end, so the server's log says it before the tags are gone. The
//! watcher also looks up each open change's VM, so a VPG added to or removed from it in Zerto is
//! journaled without anyone asking.

use std::collections::HashSet;
use std::time::Duration;

use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use rewind_core::CancellationToken;
use rewind_core::Rewind;
use rewind_core::audit_journal::{Expiring, JournalError};
use rewind_core::way_back::{parse_span, span};
use serde::Deserialize;

use crate::local_files::on_files;

/// How often the watcher reads the journal.
const WATCH_EVERY: Duration = Duration::from_secs(60);

/// The query: the span, as `rewind tags --expiring` takes it (`30m`, `2h`, `1d`).
#[derive(Debug, Deserialize)]
pub struct ExpiringQuery {
    within: String,
}

/// `GET /v1/expiring?within=2h`: needs the read role when the server signs callers in.
pub async fn expiring(
    State(rewind): State<Rewind>,
    Query(query): Query<ExpiringQuery>,
    request: Request,
) -> Response {
    if let Some(refused) = crate::guards::refusal(&rewind, request.extensions().get()) {
        return refused;
    }
    let within = match parse_span(&query.within) {
        Ok(within) => within,
        Err(e) => return crate::guards::error(StatusCode::BAD_REQUEST, format!("within: {e}")),
    };
    let found = on_files(&rewind, move |r| r.journal().expiring(within, Utc::now())).await;
    match found {
        Ok(found) => axum::Json(found).into_response(),
        Err(e) => crate::guards::error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Every minute until `stop`, on the one replica of a team server that holds the watcher's role:
/// logs each open change once as its way back comes within `[guard]
/// min_way_back_hours` of its end (none when that is 0), and looks up the VM of each open change,
/// so a VPG added to or removed from it in Zerto is journaled (`protection_changed`) and the hook
/// denies its mutating calls even when nobody asks rewind about the VM.
pub async fn watch(rewind: Rewind, stop: CancellationToken) {
    let within = chrono::Duration::from_std(rewind.config().guard.min_way_back)
        .ok()
        .filter(|w| *w > chrono::Duration::zero());
    let mut said: HashSet<(String, String)> = HashSet::new();
    let mut changes_said: HashSet<(String, String)> = HashSet::new();
    let mut leading = None;
    loop {
        leading = lead(&rewind, leading).await;
        if leading.is_some() {
            look(&rewind, within, &mut said, &mut changes_said).await;
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(WATCH_EVERY) => {}
        }
    }
}

/// One look of the watcher: one read of the journal serves both watches.
async fn look(
    rewind: &Rewind,
    within: Option<chrono::Duration>,
    said: &mut HashSet<(String, String)>,
    changes_said: &mut HashSet<(String, String)>,
) {
    match open_changes(rewind, within).await {
        Ok(open) => {
            if let Some(within) = within {
                log_expiring(&open, within, said);
            }
            for (vm, change) in check_protection(rewind, &open).await {
                if changes_said.insert((vm.clone(), change.clone())) {
                    tracing::warn!(vm = %vm, "protection changed: {change}");
                }
            }
        }
        Err(e) => tracing::warn!("the journal could not be read to watch the ways back: {e}"),
    }
}

/// The watcher's role, kept while it holds, else taken when no other replica of the team server
/// holds it: one replica watches at a time (on a journal file, the one process does).
async fn lead(
    rewind: &Rewind,
    leading: Option<rewind_core::audit_journal::ChangeHold>,
) -> Option<rewind_core::audit_journal::ChangeHold> {
    if leading.as_ref().is_some_and(|l| l.holds()) {
        return leading;
    }
    match rewind.journal().lead("watcher").await {
        Ok(Some(taken)) => {
            if rewind.journal().in_a_database() {
                tracing::info!("this replica watches the ways back");
            }
            Some(taken)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::warn!("the watcher's role could not be taken: {e}");
            None
        }
    }
}

/// Every open change (a guard whose way back has not ended, not said done): those within the
/// longest history a journal keeps, or within `within` when that is longer.
pub(crate) async fn open_changes(
    rewind: &Rewind,
    within: Option<chrono::Duration>,
) -> Result<Expiring, JournalError> {
    let span = within.map_or(LONGEST_WAY_BACK, |w| w.max(LONGEST_WAY_BACK));
    on_files(rewind, move |r| r.journal().expiring(span, Utc::now())).await
}

/// The longest a journal keeps history (30 days), so the longest a change stays open.
const LONGEST_WAY_BACK: chrono::Duration = chrono::Duration::days(30);

/// Logs each change of `open` whose way back ends within `within`, once (`said`).
fn log_expiring(open: &Expiring, within: chrono::Duration, said: &mut HashSet<(String, String)>) {
    let soon = open
        .changes
        .iter()
        .filter(|c| c.recoverable_until <= open.now + within);
    for c in soon {
        if said.insert((c.vm.id.clone(), c.change_id.clone())) {
            tracing::warn!(
                change = %c.change_id,
                vm = %c.vm,
                agent = %c.agent,
                vpg = %c.vpg_name,
                until = %c.recoverable_until,
                "the way back of change {} ends within {} ({}); keep its tags or say it is done",
                c.change_id,
                span(within),
                c.recoverable_until.format("%Y-%m-%d %H:%M UTC")
            );
        }
    }
}

/// Looks up the VM of every change of `open`: the lookup compares its VPGs with its newest
/// guard's and journals a difference the first time it is seen. Each VM whose VPGs differ, with
/// what the journal says of it.
pub(crate) async fn check_protection(rewind: &Rewind, open: &Expiring) -> Vec<(String, String)> {
    let mut changed = Vec::new();
    if rewind.config().require_sites().is_err() {
        return changed;
    }
    let mut vms: Vec<&str> = open.changes.iter().map(|c| c.vm.id.as_str()).collect();
    vms.sort_unstable();
    vms.dedup();
    for vm in vms {
        match rewind.find_protection(vm).await {
            Ok(found) => changed.extend(found.notes.into_iter().filter_map(|note| match note {
                rewind_core::ProtectionNote::ProtectionChanged { said } => {
                    Some((found.vm.name.clone(), said))
                }
                _ => None,
            })),
            // Its every VPG gone: the lookup journaled that before refusing it.
            Err(rewind_core::RewindError::VmNotProtected { vm: found, .. }) => changed.push((
                found.vm_name,
                "it is in no VPG any more: no way back is left".to_owned(),
            )),
            Err(e) => tracing::debug!(vm = %vm, "the watch could not look the VM up: {e}"),
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use rewind_core::{Config, GuardLookup, GuardRequest, NoProgress, Rewind, SiteConfig};
    use serde_json::json;
    use zvm_sim::test_kit::{CLIENT_ID, CLIENT_SECRET, Site};

    use super::{check_protection, open_changes};

    async fn checked(rewind: &Rewind) -> Vec<(String, String)> {
        let open = open_changes(rewind, None).await.unwrap();
        check_protection(rewind, &open).await
    }

    #[tokio::test]
    async fn the_watch_journals_a_vpg_added_to_an_open_changes_vm_without_anyone_asking() {
        let sim = zvm_sim::start(zvm_sim::Options::for_tests(98))
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            sites: vec![
                SiteConfig::with_client("boston", &sim.local().url, CLIENT_ID, CLIENT_SECRET)
                    .unwrap(),
            ],
            ..Config::new(
                dir.path().join("catalog.toml"),
                dir.path().join("journal.jsonl"),
            )
        };
        let rewind = Rewind::new(config).unwrap();
        let request = GuardRequest {
            vm: "db-01".into(),
            agent: "claude-code".into(),
            action: "migrate".into(),
            change_id: "watched".into(),
        };
        let report = rewind.guard(request, &NoProgress).await.unwrap();
        assert_eq!(report.verdict.word(), "guarded", "{report:?}");
        assert_eq!(checked(&rewind).await, Vec::<(String, String)>::new());

        // Someone adds db-01 to app-tier through Zerto's own API.
        let http = reqwest::Client::new();
        let zerto = Site::service(&http, &sim.local().url).await;
        let vpg = zerto.vpg_id("app-tier").await;
        let vm = zerto.get_ok("/v1/vms?vmName=db-01").await[0]["VmIdentifier"].clone();
        let (_, doc) = zerto
            .post("/v1/vpgSettings", &json!({"vpgIdentifier": vpg}))
            .await;
        let doc = format!("/v1/vpgSettings/{}", doc.as_str().unwrap());
        zerto
            .post(&format!("{doc}/vms"), &json!({"vmIdentifier": vm}))
            .await;
        let (_, task) = zerto.post(&format!("{doc}/commit"), &json!({})).await;
        zerto.wait_task(task.as_str().unwrap()).await;

        let changed = checked(&rewind).await;
        assert_eq!(changed.len(), 1, "{changed:?}");
        assert!(
            changed[0].1.contains("app-tier began protecting db-01"),
            "{changed:?}"
        );
        assert!(matches!(
            rewind.recent_guard("db-01").unwrap(),
            GuardLookup::ProtectionChanged(_)
        ));
    }
}
