//! The guards the hook judges a mutating call by: this machine's audit journal and, with
//! `[hook.team]`, the recent guards of the team server this machine's agent guards through.
//!
//! A guard made by a team server is journaled on the server, so the hook asks it
//! (`GET <url>/v1/guards?within_secs=<window>`, with `&vm=<reference>` when the call names its VM by
//! an argument) with the user's own access token: from `token_command`, else `$REWIND_TEAM_TOKEN`.
//! The records are fetched once per call, only for a mutating tool, and judged together with the
//! local ones ([`rewind_core::hook::judge`]): two VMs of one name, one in each journal, are still
//! told apart. A server that does not answer within `timeout_secs`, refuses the token or answers
//! something unreadable makes the hook fail closed; it never falls back to the local journal alone,
//! which could miss a VM of the same name.

use std::time::Duration;

use reqwest::Url;
use rewind_core::audit_journal::JournalError;
use rewind_core::config::{TEAM_TOKEN_ENV, TeamServer};
use rewind_core::hook::{GuardRecords, GuardSource, Sources, Wanted};
use rewind_core::{AuditJournal, JournalRecord};
use serde::Deserialize;

use super::reach::{self, Tried};

/// Why the guards cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum GuardsError {
    /// This machine's journal.
    #[error("{0}")]
    Journal(#[from] JournalError),
    /// The team server.
    #[error("the team server {url}: {why}")]
    Team {
        /// The server's base URL.
        url: String,
        /// What went wrong and what to do.
        why: String,
    },
}

impl GuardsError {
    /// Which guards could not be read.
    pub fn which(&self) -> GuardSource {
        match self {
            GuardsError::Journal(_) => GuardSource::Journal,
            GuardsError::Team { .. } => GuardSource::TeamServer,
        }
    }
}

/// This machine's journal and, when configured, a team server's recent guards.
#[derive(Debug)]
pub struct Guards<'a> {
    local: &'a AuditJournal,
    team: Option<&'a TeamServer>,
    window: Duration,
}

impl<'a> Guards<'a> {
    /// The guards of `local` and, if given, `team`'s, within `window`.
    pub fn new(local: &'a AuditJournal, team: Option<&'a TeamServer>, window: Duration) -> Self {
        Guards {
            local,
            team,
            window,
        }
    }

    /// The guards a judgement needs: for a VM reference, the journal's namings that may answer to
    /// it and the team server's guards of it alone; else every naming and all the team server's
    /// guards; with the journal's records of the window either way. The team server is asked once.
    pub fn read(&self, wanted: &Wanted) -> Result<GuardRecords, GuardsError> {
        let (mut namings, team) = match wanted {
            Wanted::Vm(vm) => {
                let team = self.team_records(Some(vm))?;
                (self.local.namings_of(Some(vm))?, team)
            }
            Wanted::All => {
                let namings = self.local.namings()?;
                (namings, self.team_records(None)?)
            }
        };
        let mut records = self.local.recent(self.window)?;
        namings.extend(team.iter().map(|r| (r.time, r.vm.clone())));
        records.extend(team);
        Ok(GuardRecords {
            namings,
            records,
            sources: match self.team {
                None => Sources::Journal,
                Some(_) => Sources::JournalAndTeamServer,
            },
        })
    }

    /// The team server's records of `vm` (all of them for `None`); none without a team server.
    fn team_records(&self, vm: Option<&str>) -> Result<Vec<JournalRecord>, GuardsError> {
        let Some(team) = self.team else {
            return Ok(Vec::new());
        };
        fetch(team, self.window, vm).map_err(|why| GuardsError::Team {
            url: reach::named(team),
            why,
        })
    }
}

/// The answer of `GET /v1/guards`.
#[derive(Deserialize)]
struct GuardsView {
    records: Vec<JournalRecord>,
}

/// Asks `team` for its guards of the last `window` (of `vm` only, when given), at each of its URLs
/// in turn, all within its timeout.
fn fetch(
    team: &TeamServer,
    window: Duration,
    vm: Option<&str>,
) -> Result<Vec<JournalRecord>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the hook's HTTP client: {e}"))?;
    runtime.block_on(reach::each_url(team, |url, client, token| {
        ask(url, client, token, window, vm)
    }))
}

async fn ask(
    base: Url,
    client: reqwest::Client,
    token: String,
    window: Duration,
    vm: Option<&str>,
) -> Result<Vec<JournalRecord>, Tried> {
    let url = base
        .join("v1/guards")
        .map_err(|e| Tried::Refused(format!("its URL cannot take the path v1/guards: {e}")))?;
    let answer = client
        .get(url)
        .query(&[("within_secs", window.as_secs().to_string())])
        .query(&vm.map(|vm| ("vm", vm)).into_iter().collect::<Vec<_>>())
        .bearer_auth(token)
        .send()
        .await
        .map_err(Tried::sending)?;
    let status = answer.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Err(Tried::Refused(format!(
            "it refused the access token (401{}); sign in again so that the token command (or ${TEAM_TOKEN_ENV}) gives a fresh one",
            challenge_reason(&answer)
        )));
    }
    if !status.is_success() {
        let said: serde_json::Value = answer.json().await.unwrap_or_default();
        return Err(Tried::answered(status, &said));
    }
    let view: GuardsView = answer.json().await.map_err(|e| {
        Tried::Refused(format!(
            "its answer is not the guards a team server gives ({e}); is the URL a rewind-mcp?"
        ))
    })?;
    Ok(view.records)
}

/// The `error_description` of a 401's challenge, which never holds the token.
fn challenge_reason(answer: &reqwest::Response) -> String {
    answer
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split("error_description=\"").nth(1))
        .and_then(|v| v.split('"').next())
        .map(|why| format!(": {why}"))
        .unwrap_or_default()
}
